import faulthandler, sys, os, torch
faulthandler.enable()
what, n = sys.argv[1], int(sys.argv[2])
x = torch.zeros(1, device="cuda").expand(n)
try:
    if what == "torch": torch.relu(x)
    elif what == "empty_like": torch.empty_like(x)
    elif what == "new_empty": x.new_empty(x.shape)
    else:
        sys.path.insert(0, what); import relu
        relu.relu(x)
    print(what, n, "no error")
except Exception as e:
    print(what, n, type(e).__name__, str(e)[:200])
