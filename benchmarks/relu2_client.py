"""A real client of relu_squared: a transformers causal LM whose config selects hidden_act
"relu2" (transformers' ReLUSquaredActivation, F.relu(x).square()), built from its config class
with random weights (nothing downloaded), bfloat16, plain against the same model with every
ReLUSquaredActivation module swapped for this package's layers.ReLUSquared.

    python benchmarks/relu2_client.py --device cuda --out DIR           # about 2 minutes on the H200
    python benchmarks/relu2_client.py --device cuda --quick --out DIR
    python benchmarks/relu2_client.py --device cpu --quick --standin --out /tmp/client

The model: the first of ArceeForCausalLM (AFM-4.5B's widths: hidden 2560, MLP 18432; 4
layers), NemotronForCausalLM (same widths) or NemotronHForCausalLM (attention and MLP layers
only, mlp_hidden_act "relu2") that this transformers has; none: the script says so and stops.
The swap: direct, module by module (isinstance ReLUSquaredActivation -> layers.ReLUSquared()):
transformers does not mark ReLUSquaredActivation with use_kernel_forward_from_hub, so
kernels.kernelize has no hook to replace it by.
Checks (recorded): eager bfloat16 logits of plain and swapped bit-equal (the activation is
exact: x*x of a bfloat16 is exact in float32, rounded once by both); the training loss equal,
and the largest gradient difference; compiled logits against eager (max abs difference).
Timed, plain and swapped interleaved (A B B A ...), medians of --rounds samples:
  inference   logits = model(ids), no_grad, use_cache=False
  training    p.grad = None for every parameter, loss = model(ids, labels=ids).loss,
              loss.backward(); no optimizer
each eager and compiled (regional: every decoder layer's .compile(), as transformers advises;
one compile serves the identical layers). CUDA: GPU time of calls queued behind a GPU sleep
(QueuedSampler) and the wall time per call of the untimed pass before it ("host"); CPU: host
time (HostSampler). Ratio plain / swapped: above 1.00x, the swapped model is faster.
Results: <out>/relu2_client.json (benchmarks/timing.py's format) and <out>/relu2_client.md.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from relu_squared_standin import load_kernel  # noqa: E402
from timing import (  # noqa: E402
    ROOT, HostSampler, MachineLoad, QueuedSampler, interleaved, measure_when_quiet, run_meta, synchronize, write_results,
)

# (layers, hidden, intermediate, heads, kv heads, vocab, batch, tokens)
SHAPES = {
    "cuda": (4, 2560, 18432, 20, 4, 32000, 2, 2048),  # AFM-4.5B's widths, 4 of its 36 layers
    "cuda-quick": (2, 1024, 4096, 8, 2, 32000, 1, 512),
    "cpu": (2, 512, 2048, 8, 2, 4096, 2, 256),
    "cpu-quick": (2, 128, 512, 4, 2, 1024, 1, 64),
}


def model_classes():
    """[(name, config class, model class, config kwargs maker)] this transformers offers."""
    try:
        import transformers
    except ImportError as exc:
        sys.exit(f"relu2_client: transformers does not import ({exc}); install it (e.g. pip install transformers, "
                 "or on the H200 the wheels scripts/h200_relu_squared.sh carries in .whl/transformers)")

    def dense(layers, hidden, inter, heads, kv, vocab):
        return dict(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=inter, num_attention_heads=heads,
                    num_key_value_heads=kv, head_dim=hidden // heads, vocab_size=vocab, max_position_embeddings=4096,
                    hidden_act="relu2", bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)

    def hybrid(layers, hidden, inter, heads, kv, vocab):
        return dict(hybrid_override_pattern="*-" * layers, num_hidden_layers=2 * layers, hidden_size=hidden,
                    intermediate_size=inter, num_attention_heads=heads, num_key_value_heads=kv, head_dim=hidden // heads,
                    vocab_size=vocab, mlp_hidden_act="relu2", bos_token_id=1, eos_token_id=2, pad_token_id=0,
                    tie_word_embeddings=False)

    found = []
    for name, maker in (("Arcee", dense), ("Nemotron", dense), ("NemotronH", hybrid)):
        config_cls = getattr(transformers, f"{name}Config", None)
        model_cls = getattr(transformers, f"{name}ForCausalLM", None)
        if config_cls is not None and model_cls is not None:
            found.append((name, config_cls, model_cls, maker))
    if not found:
        sys.exit(f"relu2_client: transformers {transformers.__version__} has none of ArceeForCausalLM, "
                 "NemotronForCausalLM, NemotronHForCausalLM (Arcee came in 4.53): install a newer transformers")
    return transformers.__version__, found


def build_plain(device: str, dtype: torch.dtype, shape):
    """(family name, config, model): the first family whose model builds with relu2 activations."""
    from transformers.activations import ReLUSquaredActivation

    version, families = model_classes()
    errors = []
    for name, config_cls, model_cls, maker in families:
        try:
            config = config_cls(**maker(*shape[:6]))
            torch.manual_seed(0)
            with torch.device(device):  # random weights made where they run: no 2 GB host init
                model = model_cls(config)
            model = model.to(dtype).eval()
        except Exception as exc:  # noqa: BLE001  (this family's config differs here: try the next)
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if any(isinstance(m, ReLUSquaredActivation) for m in model.modules()):
            return version, name, config, model
        errors.append(f"{name}: built, but no ReLUSquaredActivation inside")
    sys.exit(f"relu2_client: no relu2 model built with transformers {version}: " + "; ".join(errors))


def swap_activations(model: torch.nn.Module, layer_cls) -> int:
    """Every ReLUSquaredActivation child replaced by layer_cls(); returns how many."""
    from transformers.activations import ReLUSquaredActivation

    count = 0
    for parent in list(model.modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, ReLUSquaredActivation):
                setattr(parent, child_name, layer_cls())
                count += 1
    return count


def compile_layers(model: torch.nn.Module) -> None:
    # Regional compilation: each decoder layer compiled; identical layers share one compile.
    layers = model.model.layers
    for layer in layers:
        layer.compile()


def inference_step(model, ids):
    def step():
        with torch.no_grad():
            return model(ids, use_cache=False).logits

    return step


def training_step(model, ids):
    params = [p for p in model.parameters() if p.requires_grad]

    def step():
        for p in params:
            p.grad = None
        loss = model(ids, labels=ids, use_cache=False).loss
        loss.backward()
        return loss.detach()

    return step


def grads(model) -> list[torch.Tensor]:
    return [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]


def time_pair(steps: dict, device: str, args) -> dict:
    """Median us per call of each step, interleaved: GPU and wall time on CUDA, host on CPU."""
    def measure() -> list[dict]:
        if device == "cuda":
            samplers = {name: QueuedSampler(step, args.calls) for name, step in steps.items()}
        else:
            samplers = {name: HostSampler(step, device=device, calls=args.calls) for name, step in steps.items()}
            for s in samplers.values():
                s.calibrate(0.05)
        out = {}
        for name, values in interleaved(samplers, args.rounds).items():
            out[name] = {"us": statistics.median(values) * 1e6, "samples_us": [round(v * 1e6, 2) for v in values],
                         "calls_per_sample": samplers[name].calls}
            if device == "cuda":
                out[name]["host_us"] = statistics.median(samplers[name].host_samples) * 1e6
        return [out]

    # CPU: measured when the machine is quiet, again while others took more than --quiet-share.
    load = MachineLoad(args.quiet_share) if device == "cpu" and args.quiet_share < 1 else None
    return measure_when_quiet(measure, load, retries=2, wait_s=20.0)[0]


def report(meta: dict, records: list[dict], check: dict, family: str, version: str, source: str, args) -> str:
    """The markdown table of the time records; written to <out>/relu2_client.md too."""
    device = args.device
    sh = meta["shape"]
    layers, hidden, inter, batch, tokens, swaps = (sh["layers"], sh["hidden"], sh["intermediate"], sh["batch"],
                                                   sh["tokens"], meta["swapped_modules"])
    lines = [f"# relu2 client: {family}ForCausalLM on {meta['machine']}", "",
             f"transformers {version}, torch {meta['torch']}; revision {meta['git']}; kernel: {source}; "
             f"{args.dtype}, {layers} layers, hidden {hidden}, MLP {inter}, batch {batch} x {tokens}; "
             f"{swaps} ReLUSquaredActivation swapped for layers.ReLUSquared (direct swap)", "",
             f"Eager check: logits bit-equal {check['logits_equal']} (max abs diff {check['logits_max_abs_diff']:.3g}), "
             f"loss equal {check['loss_equal']}, gradients max abs diff {check['grad_max_abs_diff']:.3g}", "",
             f"Times in us, median of {args.rounds} samples ({meta['timing']}); plain / swapped above 1.00x: swapped "
             "is faster.", "",
             "| mode | workload | plain us | swapped us | plain / swapped |" + (" plain host us | swapped host us | "
                                                                          "plain / swapped host |" if device == "cuda" else ""),
             "|---|---|---|---|---|" + ("---|---|---|" if device == "cuda" else "")]
    for r in records:
        if r["kind"] != "time":
            continue
        if "error" in r:
            lines.append(f"| {r['mode']} | {r['workload']} | error: {r['error'][:120]} | | |")
            continue
        row = (f"| {r['mode']} | {r['workload']} | {r['plain']['us']:.0f} | {r['swapped']['us']:.0f} | "
               f"{r['plain_over_swapped']:.3f}x |")
        if device == "cuda":
            row += (f" {r['plain']['host_us']:.0f} | {r['swapped']['host_us']:.0f} | "
                    f"{r['plain_over_swapped_host']:.3f}x |")
        lines.append(row)
    text = "\n".join(lines) + "\n"
    (args.out / "relu2_client.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="a small model, 3 rounds")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument("--rounds", type=int, default=None, help="samples per peer (default 5; quick 3)")
    parser.add_argument("--calls", type=int, default=None, help="CUDA: calls per sample (default 3; quick 2)")
    parser.add_argument("--no-compile", action="store_true", help="eager only")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure again when others used more than this share of the cores (1: off)")
    parser.add_argument("--kernel", type=Path, default=ROOT, help="a checkout, its build/ or a variant directory")
    parser.add_argument("--standin", action="store_true",
                        help="the torch stand-in instead of a build (tests the harness; RELU_SQUARED_STANDIN=1 too)")
    parser.add_argument("--out", type=Path, required=True, help="folder for relu2_client.json and .md")
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.calls = args.calls or (2 if args.quick else 3)
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, attr):
            setattr(torch._dynamo.config, attr, 64)
    dtype = getattr(torch, args.dtype)
    shape = SHAPES[device + ("-quick" if args.quick else "")]
    layers, hidden, inter, heads, kv, vocab, batch, tokens = shape

    kernel, source = load_kernel(args.kernel, device, args.standin)
    version, family, config, plain = build_plain(device, dtype, shape)
    swapped = copy.deepcopy(plain)
    swaps = swap_activations(swapped, kernel.layers.ReLUSquared)
    assert swaps > 0 and not any(type(m).__name__ == "ReLUSquaredActivation" for m in swapped.modules())
    ids = torch.randint(3, vocab, (batch, tokens), device=device, generator=torch.Generator(device).manual_seed(0))

    meta = run_meta(device, kernel, kernel_source=source, transformers=version, model=f"{family}ForCausalLM",
                    swap="direct: each ReLUSquaredActivation module replaced by layers.ReLUSquared()",
                    swapped_modules=swaps, dtype=args.dtype,
                    shape=dict(layers=layers, hidden=hidden, intermediate=inter, heads=heads, kv_heads=kv, vocab=vocab,
                               batch=batch, tokens=tokens),
                    parameters=sum(p.numel() for p in plain.parameters()),
                    timing=("GPU time of calls queued behind a GPU sleep (us), wall time per call of the untimed pass "
                            "(host_us)" if device == "cuda" else "host time")
                    + (f"; median of {args.rounds} samples of {args.calls} calls" if device == "cuda" else
                       f"; median of {args.rounds} samples of at least 50 ms") + "; plain and swapped interleaved",
                    ratio="plain / swapped (above 1: swapped is faster)")
    out_json = args.out / "relu2_client.json"
    records = []
    print(f"{family}ForCausalLM, transformers {version}, {swaps} activations swapped, "
          f"{meta['parameters'] / 1e6:.0f} M parameters, batch {batch} x {tokens}", file=sys.stderr, flush=True)

    # Checks, eager: logits bit-equal, loss equal, gradients close.
    logits = {name: inference_step(m, ids)() for name, m in (("plain", plain), ("swapped", swapped))}
    losses = {name: training_step(m, ids)() for name, m in (("plain", plain), ("swapped", swapped))}
    grad_diff = max((a.float() - b.float()).abs().max().item() for a, b in zip(grads(plain), grads(swapped)))
    check = {"logits_equal": torch.equal(logits["plain"], logits["swapped"]),
             "logits_max_abs_diff": (logits["plain"].float() - logits["swapped"].float()).abs().max().item(),
             "loss_equal": torch.equal(losses["plain"], losses["swapped"]),
             "loss": [losses["plain"].item(), losses["swapped"].item()], "grad_max_abs_diff": grad_diff}
    records.append(dict(kind="check", mode="eager", **check))
    print(f"eager check: {check}", file=sys.stderr, flush=True)
    write_results(out_json, meta, records)

    modes = ["eager"] + ([] if args.no_compile else ["compiled"])
    for mode in modes:
        models = {"plain": plain, "swapped": swapped}
        if mode == "compiled":
            models = {name: copy.deepcopy(m) for name, m in models.items()}
            for m in models.values():
                compile_layers(m)
        for workload, make in (("inference", inference_step), ("training", training_step)):
            steps = {name: make(m, ids) for name, m in models.items()}
            started = time.time()
            try:
                for step in steps.values():  # warm-up: compile, autotune, the allocator
                    for _ in range(2):
                        step()
                synchronize(device)
                record = dict(kind="time", mode=mode, workload=workload, warmup_s=round(time.time() - started, 1))
                if mode == "compiled" and workload == "inference":
                    got = {name: step() for name, step in steps.items()}
                    record["logits_max_abs_diff_vs_eager"] = {
                        name: (got[name].float() - logits[name].float()).abs().max().item() for name in got}
                record.update(time_pair(steps, device, args))
                record["plain_over_swapped"] = record["plain"]["us"] / record["swapped"]["us"]
                if device == "cuda":
                    record["plain_over_swapped_host"] = record["plain"]["host_us"] / record["swapped"]["host_us"]
            except Exception as exc:  # noqa: BLE001  (recorded; the other modes go on)
                record = dict(kind="time", mode=mode, workload=workload, error=f"{type(exc).__name__}: {exc}",
                              trace=traceback.format_exc(limit=4))
            records.append(record)
            write_results(out_json, meta, records)
            report(meta, records, check, family, version, source, args)  # a run cut short keeps its table
            print(f"{mode} {workload}: " + (record.get("error") or
                  f"plain {record['plain']['us']:.0f} us, swapped {record['swapped']['us']:.0f} us, "
                  f"plain/swapped {record['plain_over_swapped']:.3f}"), file=sys.stderr, flush=True)
        del models

    print(report(meta, records, check, family, version, source, args), end="")


if __name__ == "__main__":
    main()
