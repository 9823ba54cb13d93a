import faulthandler, sys, torch
faulthandler.enable()
sys.path.insert(0, sys.argv[1]); import relu
case = sys.argv[2]
total = torch.cuda.get_device_properties(0).total_memory
try:
    if case == "dense":
        x = torch.ones(1 << 28, device="cuda")  # 1 GiB
        torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_allocated() + (512 << 20)) / total)
        torch.cuda.empty_cache()
        relu.relu(x)
    elif case == "strided":
        x = torch.ones(1 << 14, 1 << 15, device="cuda")[:, ::2]  # 2 GiB base, 1 GiB view
        torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_allocated() + (512 << 20)) / total)
        torch.cuda.empty_cache()
        relu.relu(x)
    elif case == "expand_small":
        x = torch.zeros(1, device="cuda").expand(1 << 28)
        torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_allocated() + (512 << 20)) / total)
        torch.cuda.empty_cache()
        relu.relu(x)
    print(case, "no error")
except Exception as e:
    print(case, type(e).__name__, str(e)[:150])
