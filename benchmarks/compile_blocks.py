"""Does this package's relu cost Inductor its fusion under torch.compile? The op is opaque to
Inductor; relu() hands Dynamo relu's definition, where(x > 0, x, 0), which Inductor fuses.
torch.compile of the blocks around an activation, with torch.relu and with this relu:

    python benchmarks/compile_blocks.py --device cuda --out DIR
    python benchmarks/compile_blocks.py --device cpu --quick --out /tmp/compile-blocks

Blocks, on x of ROWS x COLS (CUDA: 8192 x 14336; --quick: 64 x 448; CPU: 1024 x 3584):
  square         relu(x).square()                              bfloat16
  scale-shift    relu(x) * s + 1.0, s one scale per column      bfloat16
  mlp            Linear(WIDTH, COLS) -> relu -> Linear(COLS, WIDTH) on ROWS tokens, WIDTH
                 4096 (--quick 128, CPU 1024), with biases      bfloat16
  relu-<dtype>   relu(x) alone                                 float32, bfloat16, int8
each "forward" (under no_grad) and "forward+backward" (x and the MLP's parameters require
grad; backward of a fixed gradient; every .grad set to None before each step), int8 forward
only.

Peers (the same block, inputs and weights):
  torch.relu compiled    torch.compile(block with torch.relu, fullgraph=True): the yardstick
  relu compiled          the same with this package's relu: what users get now
  op compiled            the raw op (ops.relu.default) in the block, opaque to Inductor: what
                         relu() would cost without the definition (forward only: the raw op
                         has no autograd of its own)
  torch.relu eager, relu eager    for reference

Timing: CUDA, GPU time: CUDA events around --calls calls queued behind torch.cuda._sleep, so
the host's dispatch and guard time does not show (it is the GPU's time, not Python's); CPU,
host time of --calls calls. Each peer is warmed up first (compilation, autotuning), peers
are interleaved (A B C C B A ...) and each figure is the median of --repeats samples. Before
it is timed, every peer's output (and gradient) is checked against eager relu's block on
NaN-free data (where torch.relu and relu agree): bit for bit for relu alone, else close
(Inductor may reorder or contract float arithmetic).
Results: <out>/compile_blocks_<device>.json (benchmarks/timing.py's run_meta: the machine, the
software, the revision), one record per block and pass.

--activation relu_squared: the same question for relu_squared, against F.relu(x).square() (what
transformers' ReLUSquaredActivation computes), in bfloat16 blocks: scale-shift
(relu_squared(x) * s + 1.0), mlp (Linear -> relu_squared -> Linear) and relu2-bfloat16 (alone);
peers "relu.square compiled" (the yardstick), "relu_squared compiled", "op compiled" (where the
build registers ops.relu_squared), and both eager; record key torch_compiled_over_ours_compiled
(above 1: ours is faster). Results: <out>/relu_squared_compile_blocks_<device>.json. --standin:
benchmarks/relu_squared_standin.py's torch stand-in instead of a build (tests the harness).
"""

from __future__ import annotations

import argparse
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import ROOT, HostSampler, QueuedSampler, interleaved, load_build, medians, run_meta, write_results  # noqa: E402

# (ROWS, COLS, WIDTH): COLS = 3.5 x WIDTH, the hidden width of Llama-3-8B's MLP at CUDA size.
SHAPES = {"cuda": (8192, 14336, 4096), "cpu": (1024, 3584, 1024), "quick": (64, 448, 128)}
STANDALONE_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "int8": torch.int8}


@dataclass
class Activation:
    """What a run compares: torch's definition of the activation against this package's."""

    torch_label: str  # names the peers: "<label> compiled", "<label> eager"
    ours_label: str
    torch_fn: object
    op_name: str  # the raw op in the build's ops namespace
    blocks: tuple  # the blocks made for it (make_cases' names)
    standalone_dtypes: tuple
    file_prefix: str


def torch_relu_squared(x):
    return F.relu(x).square()


ACTIVATIONS = {
    "relu": Activation("torch.relu", "relu", torch.relu, "relu", ("square", "scale-shift", "mlp"),
                       tuple(STANDALONE_DTYPES), "compile_blocks"),
    "relu_squared": Activation("relu.square", "relu_squared", torch_relu_squared, "relu_squared",
                               ("scale-shift", "mlp"), ("bfloat16",), "relu_squared_compile_blocks"),
}


# ---- Blocks: each maps a relu to a function of the block's inputs.


def square_block(relu):
    return lambda x, s: relu(x).square()


def scale_shift_block(relu):
    return lambda x, s: relu(x) * s + 1.0


def standalone_block(relu):
    return lambda x, s: relu(x)


def mlp_block(up: nn.Linear, down: nn.Linear):
    def block(relu):
        return lambda x, s: down(relu(up(x)))

    return block


class Case:
    """One block at one dtype, with its inputs."""

    def __init__(self, name, block, x, s=None, params=(), exact=False, exact_grad=None):
        self.name, self.block, self.x, self.s, self.params, self.exact = name, block, x, s, list(params), exact
        self.exact_grad = exact if exact_grad is None else exact_grad
        self.dtype = str(x.dtype).removeprefix("torch.")
        self.grad_out = None  # the backward's fixed seed, made before the first backward pass

    def can_backward(self) -> bool:
        return self.x.dtype.is_floating_point


def make_cases(device: str, rows: int, cols: int, width: int, act: Activation) -> list[Case]:
    torch.manual_seed(0)
    bf16 = torch.bfloat16
    x = torch.randn(rows, cols, device=device, dtype=bf16)
    s = torch.rand(cols, device=device, dtype=bf16) + 0.5
    up = nn.Linear(width, cols, device=device, dtype=bf16)
    down = nn.Linear(cols, width, device=device, dtype=bf16)
    cases = [
        Case("square", square_block, x, s),
        Case("scale-shift", scale_shift_block, x, s),
        Case("mlp", mlp_block(up, down), torch.randn(rows, width, device=device, dtype=bf16),
             params=[*up.parameters(), *down.parameters()]),
    ]
    cases = [c for c in cases if c.name in act.blocks]
    for name in act.standalone_dtypes:
        dtype = STANDALONE_DTYPES[name]
        if dtype.is_floating_point:
            data = torch.randn(rows, cols, device=device).to(dtype)
        else:
            data = torch.randint(-128, 128, (rows, cols), device=device, dtype=dtype)
        # relu_squared alone: the forward bit for bit (x*x in float32, rounded once, as eager
        # bfloat16 does); its gradient may round once where autograd's chain rounds twice.
        cases.append(Case(f"{'relu' if act.op_name == 'relu' else 'relu2'}-{name}", standalone_block, data,
                          exact=True, exact_grad=act.op_name == "relu"))
    return cases


def own_code(fn):
    """fn with a code object of its own. Dynamo caches compiled code per code object: peers
    sharing one (a block's lambda) would each check the others' guards on every call."""
    code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}_{id(fn)}")
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def compiled(fn):
    return torch.compile(own_code(fn), fullgraph=True)


def peers_for(case: Case, act: Activation, kernel, op, backward: bool) -> tuple[dict, torch.Tensor]:
    """({name: a step of the block, no arguments}, the x the steps use)."""
    ours = getattr(kernel, act.ours_label)
    functions = {
        f"{act.torch_label} compiled": compiled(case.block(act.torch_fn)),
        f"{act.ours_label} compiled": compiled(case.block(ours)),
        f"{act.torch_label} eager": case.block(act.torch_fn),
        f"{act.ours_label} eager": case.block(ours),
    }
    if not backward and op is not None:
        functions["op compiled"] = compiled(case.block(op))
    x = case.x.detach().requires_grad_(backward)

    def step(fn):
        if not backward:
            with torch.no_grad():
                return fn(x, case.s)
        x.grad = None
        for p in case.params:
            p.grad = None
        y = fn(x, case.s)
        y.backward(case.grad_out)
        return y

    return {name: (lambda fn=fn: step(fn)) for name, fn in functions.items()}, x


def check(case: Case, peers: dict, x: torch.Tensor, backward: bool, reference: str) -> None:
    """Every peer's output (and x's gradient) against our eager block (`reference`)."""
    results = {}
    for name, run in peers.items():
        y = run().detach().clone()
        results[name] = (y, x.grad.clone() if backward else None)
    expected_y, expected_grad = results[reference]
    for name, (y, grad) in results.items():
        if case.exact:
            assert torch.equal(y, expected_y), name
        else:
            torch.testing.assert_close(y, expected_y, rtol=2e-2, atol=2e-2, msg=name)
        if backward:
            if case.exact_grad:
                assert torch.equal(grad, expected_grad), name
            else:
                torch.testing.assert_close(grad, expected_grad, rtol=2e-2, atol=2e-2, msg=name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", type=Path, default=ROOT, help="a checkout, its build/ or a variant directory")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    parser.add_argument("--quick", action="store_true", help="small shapes, few repeats: a smoke run")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 15; --quick 3)")
    parser.add_argument("--calls", type=int, default=None, help="calls per sample (default 10; --quick 3)")
    parser.add_argument("--blocks", nargs="*", default=None, help="only these blocks (e.g. square mlp relu-int8)")
    parser.add_argument("--activation", choices=list(ACTIVATIONS), default="relu")
    parser.add_argument("--standin", action="store_true",
                        help="relu_squared: the torch stand-in instead of a build (RELU_SQUARED_STANDIN=1 too)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 15)
    calls = args.calls or (3 if args.quick else 10)
    device = args.device
    rows, cols, width = SHAPES["quick" if args.quick else device]

    act = ACTIVATIONS[args.activation]
    if args.activation == "relu_squared":
        from relu_squared_standin import load_kernel

        kernel, source = load_kernel(args.kernel, device, args.standin)
    else:
        kernel, source = load_build(args.kernel, device), f"build {args.kernel}"
    op = getattr(getattr(getattr(kernel, "_ops", None), "ops", None), act.op_name, None)
    op = op.default if op is not None else None
    # CUDA: GPU time of calls queued behind a sleep (compiled forward + backward is not
    # captured in a graph); CPU: host time.
    sampler = (lambda run: QueuedSampler(run, calls)) if device == "cuda" else (lambda run: HostSampler(run, calls=calls))

    rows_out = []
    out_file = args.out / f"{act.file_prefix}_{device}.json"
    meta = run_meta(device, kernel, activation=args.activation, kernel_source=source,
                    shape={"rows": rows, "cols": cols, "width": width},
                    timing=("GPU time, CUDA events around queued calls" if device == "cuda" else "host time")
                    + f"; median of {repeats} samples of {calls} calls")
    for case in make_cases(device, rows, cols, width, act):
        if args.blocks and case.name not in args.blocks:
            continue
        for backward in (False, True):
            if backward and not case.can_backward():
                continue
            torch._dynamo.reset()
            if backward and case.grad_out is None:
                with torch.no_grad():
                    case.grad_out = torch.randn_like(case.block(act.torch_fn)(case.x, case.s))
            peers, x = peers_for(case, act, kernel, op, backward)
            for run in peers.values():  # warm-up: compile, autotune, fill the allocator
                for _ in range(3):
                    run()
            check(case, peers, x, backward, f"{act.ours_label} eager")
            seconds = medians(interleaved({name: sampler(run) for name, run in peers.items()}, repeats))
            row = {
                "block": case.name, "dtype": case.dtype, "pass": "forward+backward" if backward else "forward",
                "x_shape": list(case.x.shape), "seconds": seconds,
            }
            ours, theirs = seconds[f"{act.ours_label} compiled"], seconds[f"{act.torch_label} compiled"]
            if args.activation == "relu":
                row["relu_compiled_over_torch_relu_compiled"] = ours / theirs
            else:  # the ratio convention of the newer benchmarks: peer / ours
                row["torch_compiled_over_ours_compiled"] = theirs / ours
            rows_out.append(row)
            print(f"{case.name:12s} {case.dtype:9s} {row['pass']:17s} "
                  + "  ".join(f"{name} {1e6 * t:9.1f} us" for name, t in seconds.items()), flush=True)
            write_results(out_file, meta, rows_out)


if __name__ == "__main__":
    main()
