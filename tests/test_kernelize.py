"""kernels' kernelize with this checkout: nn.ReLU layers, and a plain function, marked with
the Hub layer name "ReLU" run relu's layer in inference and training modes, each with and
without torch.compile, and compute what the unkernelized model computes, gradients included.
Compiled, the graphs hold relu's definition in aten ops, not the kernel's op, so Inductor
can fuse it (issue 12).

The layer is mapped to this checkout two ways, both offline: LocalLayerRepository, and
LayerRepository with LOCAL_KERNELS (set by conftest). LayerRepository(version=3) cannot
be used offline even with LOCAL_KERNELS: kernels 0.17.2 resolves the version against the
Hub before it consults LOCAL_KERNELS, so the mapping names revision="main".

kernels loads the variant of the machine's default backend (CUDA where there is a GPU), so
the models run on that device."""

import copy

import pytest
import torch
from kernels import (
    FuncRepository,
    LayerRepository,
    LocalLayerRepository,
    Mode,
    kernelize,
    use_kernel_forward_from_hub,
    use_kernel_func_from_hub,
    use_kernel_mapping,
    use_kernelized_func,
)
from kernels.layer.layer import _validate_layer
from torch import nn
from torch._dynamo.testing import AotEagerAndRecordGraphs

from conftest import KERNEL_ROOT, REPO_ID

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
REPOSITORIES = {
    "local-path": lambda: LocalLayerRepository(repo_path=KERNEL_ROOT, layer_name="ReLU"),
    "LOCAL_KERNELS": lambda: LayerRepository(repo_id=REPO_ID, layer_name="ReLU", revision="main"),
}
MODES = {
    "inference": Mode.INFERENCE,
    "inference+compile": Mode.INFERENCE | Mode.TORCH_COMPILE,
    "training": Mode.TRAINING,
    "training+compile": Mode.TRAINING | Mode.TORCH_COMPILE,
}
NAN = float("nan")


@use_kernel_forward_from_hub("ReLU")
class HubReLU(nn.ReLU):
    """nn.ReLU, replaceable by the Hub layer "ReLU" (the pattern transformers uses)."""


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.act = HubReLU()
        self.mid = nn.Linear(64, 64)
        self.act_inplace = HubReLU(inplace=True)  # the kernel returns a new tensor instead
        self.down = nn.Linear(64, 8)

    def forward(self, x):
        return self.down(self.act_inplace(self.mid(self.act(self.up(x)))))


def kernelized(model, repository, mode):
    with use_kernel_mapping({"ReLU": {DEVICE: repository}}, inherit_mapping=False):
        # use_fallback=False: a missing mapping, a mode the layer does not declare or a
        # failed load raises instead of silently keeping nn.ReLU.
        return kernelize(model, mode=mode, device=DEVICE, use_fallback=False)


def runs_the_kernel(act) -> bool:
    """relu maps NaN to 0; torch's nn.ReLU keeps NaN. Tells the two forwards apart."""
    y = act(torch.tensor([NAN, -1.0, 2.0], device=DEVICE))
    return y.tolist() == [0.0, 0.0, 2.0]


def compiled_for(mode, model):
    """(forward, recorder): the model itself outside the compile modes; else torch.compile of
    it through a backend that records Dynamo's and AOTAutograd's graphs."""
    if "compile" not in mode:
        return model, None
    torch._dynamo.reset()
    recorder = AotEagerAndRecordGraphs()
    return torch.compile(model, backend=recorder, fullgraph=True), recorder


def assert_one_graph_of_aten_ops(recorder):
    assert len(recorder.graphs) == 1  # no graph break, no recompilation
    namespaces = {
        node.target.namespace
        for graph in recorder.fw_graphs + recorder.bw_graphs
        for node in graph.graph.nodes
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
    }
    assert namespaces == {"aten"}, namespaces


def runs_the_kernel_compiled(act) -> bool:
    return runs_the_kernel(torch.compile(act, backend="aot_eager", fullgraph=True))


def forward_backward(model, x):
    x = x.detach().clone().requires_grad_(True)
    y = model(x)
    y.square().mean().backward()
    return [y.detach(), x.grad] + [p.grad for p in model.parameters()]


def test_layer_passes_kernels_validation(kernel):
    # What kernelize runs on every layer it loads: no constructor, no members beyond
    # can_torch_compile/has_backward, forward's signature that of the replaced layer.
    _validate_layer(check_cls=nn.ReLU, cls=kernel.layers.ReLU, repo="relu")
    assert kernel.layers.ReLU.has_backward and kernel.layers.ReLU.can_torch_compile


@pytest.mark.parametrize("repository", REPOSITORIES)
@pytest.mark.parametrize("mode", MODES)
def test_kernelized_model_matches_original(repository, mode):
    torch.manual_seed(0)
    original = MLP().to(DEVICE)
    model = kernelized(copy.deepcopy(original), REPOSITORIES[repository](), MODES[mode])
    assert runs_the_kernel(model.act) and runs_the_kernel(model.act_inplace)
    assert not runs_the_kernel(original.act)
    x = torch.randn(16, 32, device=DEVICE)

    forward, recorder = compiled_for(mode, model)
    if mode.startswith("inference"):
        with torch.inference_mode():
            torch.testing.assert_close(forward(x), original(x))
    else:
        for _ in range(2):
            model.zero_grad()
            original.zero_grad()
            for got, expected in zip(forward_backward(forward, x), forward_backward(original, x)):
                torch.testing.assert_close(got, expected)
    if recorder is not None:
        assert_one_graph_of_aten_ops(recorder)
        assert runs_the_kernel_compiled(model.act) and runs_the_kernel_compiled(model.act_inplace)


@pytest.mark.parametrize("mode", MODES)
def test_kernelized_function_matches_original(mode):
    """Function replacement: a function marked with use_kernel_forward_from_hub becomes a
    module that kernelize swaps, once attached to a model with use_kernelized_func."""

    @use_kernel_forward_from_hub("ReLU")
    def hub_relu(x):
        return torch.relu(x)

    @use_kernelized_func(hub_relu)
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(32, 64)
            self.down = nn.Linear(64, 8)

        def forward(self, x):
            return self.down(hub_relu(self.up(x)))

    torch.manual_seed(0)
    model = Block().to(DEVICE)
    x = torch.randn(16, 32, device=DEVICE)
    assert not runs_the_kernel(hub_relu)
    expected = forward_backward(model, x)
    model.zero_grad()

    kernelized(model, REPOSITORIES["local-path"](), MODES[mode])
    assert runs_the_kernel(hub_relu)
    forward, recorder = compiled_for(mode, model)
    if mode.startswith("inference"):
        with torch.inference_mode():
            torch.testing.assert_close(forward(x), expected[0])
    else:
        for got, want in zip(forward_backward(forward, x), expected):
            torch.testing.assert_close(got, want)
    if recorder is not None:
        assert_one_graph_of_aten_ops(recorder)
        assert runs_the_kernel_compiled(hub_relu)


@pytest.mark.parametrize("mode", MODES)
def test_deprecated_function_repository(mode):
    """kernels 0.17.2 still has the older function route, deprecated (it logs so):
    use_kernel_func_from_hub + FuncRepository(func_name="relu") maps the package's
    top-level relu function itself. The replaced function needs relu's signature."""

    @use_kernel_func_from_hub("relu")
    def hub_relu(x, out=None):
        return torch.relu(x)

    @use_kernelized_func(hub_relu)
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(32, 64)

        def forward(self, x):
            return hub_relu(self.up(x))

    torch.manual_seed(0)
    model = Block().to(DEVICE)
    x = torch.randn(16, 32, device=DEVICE)
    expected = forward_backward(model, x)
    model.zero_grad()

    repository = FuncRepository(repo_id=REPO_ID, func_name="relu", revision="main")
    with use_kernel_mapping({"relu": {DEVICE: repository}}, inherit_mapping=False):
        kernelize(model, mode=MODES[mode], device=DEVICE, use_fallback=False)
    assert runs_the_kernel(hub_relu)
    forward, recorder = compiled_for(mode, model)
    if mode.startswith("inference"):
        with torch.inference_mode():
            torch.testing.assert_close(forward(x), expected[0])
    else:
        for got, want in zip(forward_backward(forward, x), expected):
            torch.testing.assert_close(got, want)
    if recorder is not None:
        assert_one_graph_of_aten_ops(recorder)
        assert runs_the_kernel_compiled(hub_relu)


# ---- The ReLU family's layers: each replaces the module an ecosystem already has.


@use_kernel_forward_from_hub("ReLUSquared")
class HubReLUSquared(nn.Module):
    """transformers' ReLUSquaredActivation, marked for the Hub layer."""

    def forward(self, input):
        return torch.square(nn.functional.relu(input))


@use_kernel_forward_from_hub("FatreluAndMul")
class HubFatreluAndMul(nn.Module):
    """vLLM's FatreluAndMul: the threshold is an attribute of the replaced module."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def forward(self, x):
        d = x.shape[-1] // 2
        return nn.functional.threshold(x[..., :d], self.threshold, 0.0) * x[..., d:]


@pytest.mark.parametrize(
    ("layer", "replaced"), [("ReLUSquared", HubReLUSquared), ("FatreluAndMul", HubFatreluAndMul)]
)
def test_family_layers_pass_validation(kernel, layer, replaced):
    _validate_layer(check_cls=replaced, cls=getattr(kernel.layers, layer), repo="relu")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("layer", "module", "width"), [("ReLUSquared", HubReLUSquared, 64),
                                                         ("FatreluAndMul", lambda: HubFatreluAndMul(0.25), 32)])
def test_family_layer_kernelized_matches_original(mode, layer, module, width):
    model = nn.Sequential(nn.Linear(16, 64), module(), nn.Linear(width, 4)).to(DEVICE)
    reference = copy.deepcopy(model)
    repository = LocalLayerRepository(repo_path=KERNEL_ROOT, layer_name=layer)
    with use_kernel_mapping({layer: {DEVICE: repository}}, inherit_mapping=False):
        model = kernelize(model, mode=MODES[mode], device=DEVICE, use_fallback=False)
    # The kernel's gate maps NaN to 0 where torch's keeps it: the swap really happened.
    probe = torch.cat([torch.full((2, 32), NAN, device=DEVICE), torch.ones(2, 32, device=DEVICE)], dim=-1)
    assert not model[1](probe).isnan().any() and reference[1](probe).isnan().any()
    forward, recorder = compiled_for(mode, model)
    x = torch.randn(8, 16, device=DEVICE)
    torch.testing.assert_close(forward(x), reference(x), rtol=1e-6, atol=1e-6)
    if recorder is not None:
        assert_one_graph_of_aten_ops(recorder)
    if "training" in mode:
        for got, want in zip(forward_backward(forward, x), forward_backward(reference, x)):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
