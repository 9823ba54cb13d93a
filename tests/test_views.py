"""relu over views that are not one dense block (issue 14): a chunk, x[:, ::2], a transposed
slice, permuted 3-D slices, expand()ed inputs, and random views (shape, slices with steps and
start offsets, permutation, storage offset, expand). Every form: allocating (values, a dense
result in the layout torch.relu(x) gives), out= contiguous, out= a strided view of a poisoned
buffer, out= in x's layout, in place on the view, out and x interleaved in one storage;
gradients through views and relu_backward on strided operands. Bit for bit against
tests/reference.py.

Every test draws fresh data and views. A failure names its seed; to replay it:

    RELU_VIEWS_SEED=<seed> python -m pytest tests/test_views.py -k '<test id>'
"""

from __future__ import annotations

import math
import os
import random
import secrets
from dataclasses import dataclass
from typing import Callable

import pytest
import torch

from reference import (
    BITS_ONLY_DTYPES,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    bits_of,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

ALL_DTYPES = SUPPORTED_DTYPES + BITS_ONLY_DTYPES
# The dtypes every view and form runs in: 4, 2 and 1 bytes per element.
VIEW_DTYPES = [torch.float32, torch.bfloat16, torch.int8]
SEED_ENV = "RELU_VIEWS_SEED"
RANDOM_DRAWS = 24
# Sizes a random view's dimensions take: 1 (dropped by any walk), a few elements, and the
# tails around 16-byte vectors of every dtype.
SIZES = [1, 1, 2, 3, 5, 8, 15, 16, 17, 33, 64, 65]
MAX_STORAGE = 1 << 16  # elements: keeps a random case at a few milliseconds on the CPU


# ---- views ----------------------------------------------------------------------------------


@dataclass
class View:
    """A layout over a 1-D storage of `storage_numel` elements. `make` applies view ops only,
    so it gives the same layout over any storage of that length: x's data, a poisoned output
    buffer, a boolean mask of the elements the view covers."""

    name: str
    storage_numel: int
    make: Callable[[torch.Tensor], torch.Tensor]
    repeats_elements: bool = False  # an expand()ed view: valid as x, never as out

    def over(self, storage: torch.Tensor) -> torch.Tensor:
        assert storage.shape == (self.storage_numel,)
        return self.make(storage)

    def covered(self, device) -> torch.Tensor:
        """Boolean mask over the storage: True where the view has an element."""
        mask = torch.zeros(self.storage_numel, dtype=torch.bool, device=device)
        self.make(mask).fill_(True)  # never called on a view that repeats elements
        return mask


def from_shape(name: str, shape: tuple, fn: Callable, repeats_elements: bool = False) -> View:
    return View(name, math.prod(shape), lambda s: fn(s.view(shape)), repeats_elements)


# The views of a 2-D source, small (37 x 70) and large (300 x 4098: every view past the
# CPU's 256 KiB task grain in every dtype here, in rows of odd length, so that the work is
# split between threads mid-row; rows of 2 KiB and more in every dtype, so that CUDA runs its
# row kernel, with row starts misaligned differently from row to row), plus a 3-D permuted slice, a column and expand()ed rows
# and columns.
R, C = 37, 70
BR, BC = 300, 4098
NAMED_VIEWS = {
    "chunk0": from_shape("chunk0", (R, C), lambda s: s.chunk(2, dim=-1)[0]),
    "chunk1": from_shape("chunk1", (R, C), lambda s: s.chunk(2, dim=-1)[1]),
    "cols-step2": from_shape("cols-step2", (R, C), lambda s: s[:, ::2]),
    "chunk0-t": from_shape("chunk0-t", (R, C), lambda s: s.chunk(2, dim=-1)[0].t()),
    "slice3d-permuted": from_shape("slice3d-permuted", (6, 9, 11), lambda s: s[:, 1:, :5].permute(2, 0, 1)),
    "cols-from1-step3": from_shape("cols-from1-step3", (R, C), lambda s: s[..., 1::3]),
    "column": from_shape("column", (R, C), lambda s: s[:, 5:6]),
    "large-chunk1": from_shape("large-chunk1", (BR, BC), lambda s: s.chunk(2, dim=-1)[1]),
    "large-cols-step2": from_shape("large-cols-step2", (BR, BC), lambda s: s[:, ::2]),
    "large-chunk0-t": from_shape("large-chunk0-t", (BR, BC), lambda s: s[:, : BC // 2].t()),
    "expanded-row": from_shape("expanded-row", (R, C), lambda s: s[3].expand(5, C), repeats_elements=True),
    "expanded-cols": from_shape(
        "expanded-cols", (6, 9, 11), lambda s: s[:, 2:3, ::2].expand(6, 4, 6).permute(2, 1, 0), repeats_elements=True
    ),
}
RANDOM_CASES = [f"random{i:02d}" for i in range(RANDOM_DRAWS)]
VIEW_CASES = list(NAMED_VIEWS) + RANDOM_CASES
# Cases whose x may be written: out in x's layout, and in place.
WRITABLE_CASES = [c for c in VIEW_CASES if not (c in NAMED_VIEWS and NAMED_VIEWS[c].repeats_elements)]


def random_view(rng: random.Random, shape=None, expand: bool = True) -> View:
    """storage[offset:].view(buffer)[slices].permute(perm)[.expand(shape)]: a random shape of
    1-4 dims (or `shape`), steps of 1-5 with start offsets (the CPU has a vector loop for
    steps 2-4 along a row and an element loop for others), padding between rows, a random
    storage offset (odd ones included: unaligned to 16 bytes) and, with `expand`, some
    dimensions broadcast from size 1 (stride 0)."""
    # A given shape may be large (out= for a large x): room for a few steps and pads.
    limit = MAX_STORAGE if shape is None else max(MAX_STORAGE, 16 * math.prod(shape))
    while True:
        final = list(shape) if shape is not None else [rng.choice(SIZES) for _ in range(rng.randint(1, 4))]
        ndim = len(final)
        broadcast = [expand and size > 1 and rng.random() < 0.2 for size in final]
        before_expand = [1 if b else size for size, b in zip(final, broadcast)]
        perm = list(range(ndim))
        rng.shuffle(perm)
        sliced = [0] * ndim  # sliced.permute(perm) has shape before_expand
        for i, p in enumerate(perm):
            sliced[p] = before_expand[i]
        steps = [rng.choice([1, 1, 2, 3, 4, 5]) for _ in range(ndim)]
        starts = [rng.choice([0, 0, 1, 2]) for _ in range(ndim)]
        buffer = [start + (size - 1) * step + 1 + rng.choice([0, 0, 1, 3])
                  for size, step, start in zip(sliced, steps, starts)]
        offset = rng.randrange(0, 40)
        if offset + math.prod(buffer) <= limit:
            break
    slices = tuple(slice(start, start + (size - 1) * step + 1, step) for size, step, start in zip(sliced, steps, starts))

    def make(storage):
        view = storage[offset : offset + math.prod(buffer)].view(buffer)[slices].permute(perm)
        return view.expand(final) if any(broadcast) else view

    text = ",".join(f"{s.start}:{s.stop}:{s.step}" for s in slices)
    name = f"storage[{offset}:].view({buffer})[{text}].permute({perm})" + (f".expand({final})" if any(broadcast) else "")
    return View(name, offset + math.prod(buffer), make, any(broadcast))


def view_for(case: str, rng: random.Random, writable: bool = False) -> View:
    if case in NAMED_VIEWS:
        return NAMED_VIEWS[case]
    return random_view(rng, expand=not writable)


def on_meta(view: View) -> torch.Tensor:
    """The view over a storage without data: its shape and strides, for free."""
    return view.over(torch.empty(view.storage_numel, device="meta"))


def describe(t: torch.Tensor) -> str:
    return f"shape {list(t.shape)} strides {list(t.stride())} offset {t.storage_offset()} {t.dtype} {t.device}"


def is_dense(t: torch.Tensor) -> bool:
    """Non-overlapping and dense: the dims of size > 1, ordered by stride, are contiguous."""
    expected = 1
    for stride, size in sorted((st, s) for s, st in zip(t.shape, t.stride()) if s > 1):
        if stride != expected:
            return False
        expected *= size
    return True


# ---- seeds ------------------------------------------------------------------------------------


@dataclass
class Case:
    """One test's randomness: a fresh seed (RELU_VIEWS_SEED replays one) for the view draws
    (rng) and for torch's CPU generator, which tests/reference.py's random_input draws from.
    Every check names the seed and the operands."""

    seed: int
    rng: random.Random

    def note(self, what: str) -> str:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        return f"{what}\n  replay: {SEED_ENV}={self.seed} python -m pytest '{test}'"

    def equal(self, actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
        try:
            assert_bitwise_equal(actual, expected)
        except AssertionError as error:
            raise AssertionError(self.note(f"{what}: {error}")) from None

    def untouched(self, storage: torch.Tensor, before: torch.Tensor, written: torch.Tensor, what: str) -> None:
        """Every element of `storage` outside the `written` mask still holds `before`."""
        keep = ~written  # indexed through the bit patterns: float8 has no CPU indexing kernel
        self.equal(bits_of(storage)[keep], bits_of(before)[keep], f"{what}: elements outside out were written")


@pytest.fixture
def case():
    seed = int(os.environ.get(SEED_ENV) or secrets.randbits(32))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield Case(seed, random.Random(seed))


def x_over(view: View, dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(storage of fresh random data with NaN, +-inf, +-0.0 planted, x = the view over it)."""
    storage = random_input(view.storage_numel, dtype, device)
    return storage, view.over(storage)


def poisoned_storage(numel: int, dtype, device) -> torch.Tensor:
    return poisoned_like(torch.empty(numel, dtype=dtype, device=device))


# ---- allocating -------------------------------------------------------------------------------


def check_allocating(kernel, case: Case, x: torch.Tensor, label: str) -> torch.Tensor:
    x_before = x.clone()
    result = kernel.relu(x)
    what = f"relu(x) [{label}], x: {describe(x)}"
    case.equal(result, reference_relu(x_before), what)
    case.equal(x, x_before, f"{what}: x was written")
    assert is_dense(result), case.note(f"{what}: result is not dense: {describe(result)}")
    return result


def check_layout_like_torch(kernel, case: Case, x: torch.Tensor, label: str) -> None:
    """relu(x) allocates like torch.relu(x) (TensorIterator: dense, in x's stride order).
    torch.relu lacks float8 and uint16-64: their layout is asked of a same-width integer view
    with x's strides (a layout does not depend on the dtype)."""
    result = kernel.relu(x)
    like = torch.relu(bits_of(x) if x.dtype in BITS_ONLY_DTYPES else x)
    significant = [d for d in range(x.dim()) if x.shape[d] > 1]
    got = [result.stride(d) for d in significant]
    want = [like.stride(d) for d in significant]
    assert got == want, case.note(
        f"relu(x) [{label}] strides {list(result.stride())}, torch.relu(x) {list(like.stride())} "
        f"(compared on dims {significant}, those of size > 1); x: {describe(x)}"
    )


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize("view_case", VIEW_CASES)
def test_allocating(kernel, device, case, view_case, dtype):
    view = view_for(view_case, case.rng)
    _, x = x_over(view, dtype, device)
    check_allocating(kernel, case, x, view.name)


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize("view_case", VIEW_CASES)
def test_allocating_layout_like_torch(kernel, device, case, view_case, dtype):
    view = view_for(view_case, case.rng)
    _, x = x_over(view, dtype, device)
    check_layout_like_torch(kernel, case, x, view.name)


# ---- out= -------------------------------------------------------------------------------------


def check_out(kernel, case: Case, view: View, x_storage: torch.Tensor, out_form: str) -> None:
    """relu(x, out=o) for one form of o. `view` over `x_storage` is x."""
    x = view.over(x_storage)
    dtype, device = x.dtype, x.device
    x_storage_before = x_storage.clone()
    expected = reference_relu(x)
    if out_form == "in-place":
        out_storage, out_view = x_storage, view
    elif out_form == "like-x":  # x's strides and storage offset, in a buffer of its own
        out_storage, out_view = poisoned_storage(view.storage_numel, dtype, device), view
    elif out_form == "strided":  # a random layout of x's shape, non-dense almost always
        out_view = random_view(case.rng, shape=tuple(x.shape), expand=False)
        out_storage = poisoned_storage(out_view.storage_numel, dtype, device)
    else:
        assert out_form == "contiguous"
        out_view = View("contiguous", x.numel(), lambda s: s.view(x.shape))
        out_storage = poisoned_storage(x.numel(), dtype, device)
    out = out_view.over(out_storage)
    out_storage_before = out_storage.clone()
    what = f"relu(x, out=o) [{out_form}], x: {view.name}: {describe(x)}; o: {out_view.name}: {describe(out)}"
    returned = kernel.relu(x, out=out)
    assert returned is out, case.note(f"{what}: did not return out")
    case.equal(out, expected, what)
    case.untouched(out_storage, out_storage_before, out_view.covered(device), what)
    if out_form != "in-place":
        case.equal(x_storage, x_storage_before, f"{what}: x's storage was written")


OUT_FORMS = ["contiguous", "strided", "like-x", "in-place"]
# An expand()ed x repeats elements: its own layout is no valid out=, so like-x and in-place
# run on the views that can be written.
OUT_CASES = [(c, f) for c in VIEW_CASES for f in OUT_FORMS if f in ("contiguous", "strided") or c in WRITABLE_CASES]


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize(("view_case", "out_form"), OUT_CASES, ids=[f"{c}-out-{f}" for c, f in OUT_CASES])
def test_out(kernel, device, case, view_case, out_form, dtype):
    view = view_for(view_case, case.rng, writable=out_form in ("like-x", "in-place"))
    x_storage, _ = x_over(view, dtype, device)
    check_out(kernel, case, view, x_storage, out_form)


# ---- every dtype ----------------------------------------------------------------------------------


@pytest.mark.parametrize("view_case", ["chunk1", "chunk0-t", "slice3d-permuted", "random"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype(kernel, device, case, dtype, view_case):
    """Every dtype the kernels take, on a few views: every form."""
    view = NAMED_VIEWS[view_case] if view_case in NAMED_VIEWS else random_view(case.rng, expand=False)
    x_storage, x = x_over(view, dtype, device)
    check_allocating(kernel, case, x, view.name)
    check_layout_like_torch(kernel, case, x, view.name)
    for out_form in OUT_FORMS:
        check_out(kernel, case, view, x_storage.clone(), out_form)


# ---- out and x in one storage -------------------------------------------------------------------

# (x, out) from one base of shape (R2, C2); each pair shares memory but is not the same elements
# with the same strides, and at least one of the two is not dense (two dense tensors that
# partially overlap are rejected: test_contract.py).
R2, C2 = 36, 72
ALIAS_PAIRS = {
    "even-odd-columns": lambda b: (b[:, ::2], b[:, 1::2]),
    "interleaved-1d": lambda b: (b.view(-1)[::2], b.view(-1)[1::2]),
    "shifted-rows-of-strided": lambda b: (b[:, ::2][:-1], b[:, ::2][1:]),
    "shifted-cols-of-row-slice": lambda b: (b[::2][:, :-1], b[::2][:, 1:]),
    "shifted-strided-1d": lambda b: (b.view(-1)[::3][:-1], b.view(-1)[::3][1:]),
    "transposed-onto-itself": lambda b: (b[:, :R2], b[:, :R2].t()),
    "dense-x-strided-out": lambda b: (b.view(-1)[: 8 * C2].view(8, C2), b.view(-1)[1::2][: 8 * C2].view(8, C2)),
}


def check_alias(kernel, case: Case, storage: torch.Tensor, x: torch.Tensor, out: torch.Tensor,
                out_mask: torch.Tensor, label: str) -> None:
    expected = reference_relu(x.clone())  # from x as it was before the call
    before = storage.clone()
    what = f"relu(x, out=o) [{label}], x: {describe(x)}; o: {describe(out)}"
    returned = kernel.relu(x, out=out)
    assert returned is out, case.note(f"{what}: did not return out")
    case.equal(out, expected, what)
    case.untouched(storage, before, out_mask, what)


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize("pair", list(ALIAS_PAIRS))
def test_interleaved_alias(kernel, device, case, pair, dtype):
    storage = random_input(R2 * C2, dtype, device)
    x, out = ALIAS_PAIRS[pair](storage.view(R2, C2))
    assert not (is_dense(x) and is_dense(out)), "a pair the binding rejects"
    mask = torch.zeros(R2 * C2, dtype=torch.bool, device=device)
    ALIAS_PAIRS[pair](mask.view(R2, C2))[1].fill_(True)
    check_alias(kernel, case, storage, x, out, mask, pair)


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize("draw", range(8))
def test_interleaved_alias_random(kernel, device, case, draw, dtype):
    """out = x's layout shifted by 1-5 elements in the same storage: interleaved with x, or
    overlapping it element by element."""
    while True:
        view = random_view(case.rng, expand=False)
        if not is_dense(on_meta(view)):
            break
    shift = case.rng.randint(1, 5)
    storage = random_input(view.storage_numel + shift, dtype, device)
    x, out = view.over(storage[:-shift]), view.over(storage[shift:])
    mask = torch.zeros(view.storage_numel + shift, dtype=torch.bool, device=device)
    view.over(mask[shift:]).fill_(True)
    check_alias(kernel, case, storage, x, out, mask, f"{view.name}, out {shift} elements on")


# ---- gradients ----------------------------------------------------------------------------------

GRADIENT_CASES = [c for c in NAMED_VIEWS if not c.startswith("large")] + RANDOM_CASES[:8]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("grad_layout", ["contiguous", "strided", "sum"])
@pytest.mark.parametrize("view_case", GRADIENT_CASES)
def test_gradient_through_view(kernel, device, case, view_case, grad_layout, dtype):
    """relu(v), v a view of a leaf: the gradient reaching v is grad * (v > 0) bit for bit, and
    the leaf's gradient is that scattered back through the view (summed over expand()ed
    dimensions, as autograd sums any expand)."""
    view = view_for(view_case, case.rng)
    leaf = random_input(view.storage_numel, dtype, device).requires_grad_(True)
    v = view.over(leaf)
    reached = []
    v.register_hook(reached.append)  # the gradient relu's backward hands to v, as it made it
    y = kernel.relu(v)
    what = f"relu(v).backward [{grad_layout}], v: {view.name}: {describe(v)}"
    case.equal(y, reference_relu(v.detach()), what)
    if grad_layout == "sum":
        grad = torch.ones(v.shape, dtype=dtype, device=device)
        y.sum().backward()  # the gradient arrives expand()ed: stride 0 everywhere
    else:
        if grad_layout == "contiguous":
            grad = random_input(tuple(v.shape), dtype, device)
        else:
            grad_view = random_view(case.rng, shape=tuple(v.shape))
            grad = grad_view.over(random_input(grad_view.storage_numel, dtype, device))
            what += f"; grad: {describe(grad)}"
        y.backward(grad)
    expected_v_grad = reference_relu_backward(grad, v.detach())
    case.equal(reached[0], expected_v_grad, f"{what}: gradient reaching v")
    if view.repeats_elements:
        # The sum over expanded dims, from the reference in the layout relu's gradient came in.
        incoming = torch.empty_strided(reached[0].shape, reached[0].stride(), dtype=dtype, device=device)
        incoming.copy_(expected_v_grad)
        probe = leaf.detach().clone().requires_grad_(True)
        (expected_leaf_grad,) = torch.autograd.grad(view.over(probe), probe, incoming)
    else:
        expected_leaf_grad = torch.zeros(view.storage_numel, dtype=dtype, device=device)
        view.over(expected_leaf_grad).copy_(expected_v_grad)
    case.equal(leaf.grad, expected_leaf_grad, f"{what}: leaf gradient")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("layouts", ["grad-strided", "result-strided", "both-strided", "grad-expanded"])
@pytest.mark.parametrize("draw", range(4))
def test_relu_backward_op_layouts(ops, device, case, draw, layouts, dtype):
    """The raw relu_backward(grad_out, result) with operands of differing layouts: result
    holds arbitrary values (NaN, -0.0, negatives) as the op must not assume it came from relu."""
    shape = tuple(on_meta(random_view(case.rng, expand=False)).shape)

    def operand(strided: bool) -> torch.Tensor:
        if not strided:
            return random_input(shape, dtype, device)
        view = random_view(case.rng, shape=shape)
        return view.over(random_input(view.storage_numel, dtype, device))

    if layouts == "grad-expanded":  # what y.sum().backward() hands relu's backward
        grad_out = random_input((), dtype, device).expand(shape)
    else:
        grad_out = operand(layouts != "result-strided")
    result = operand(layouts in ("result-strided", "both-strided", "grad-expanded"))
    grad_before, result_before = grad_out.clone(), result.clone()
    got = ops.relu_backward(grad_out, result)
    what = f"relu_backward [{layouts}], grad_out: {describe(grad_out)}; result: {describe(result)}"
    case.equal(got, reference_relu_backward(grad_out, result), what)
    assert is_dense(got), case.note(f"{what}: gradient is not dense: {describe(got)}")
    case.equal(grad_out, grad_before, f"{what}: grad_out was written")
    case.equal(result, result_before, f"{what}: result was written")


# ---- the ops' fake (meta) functions agree with them on views --------------------------------------


@pytest.mark.parametrize("view_case", [c for c in NAMED_VIEWS if not c.startswith("large")])
def test_opcheck_on_views(ops, device, case, view_case):
    """torch.library.opcheck compares the registered fake's strides with the op's: a change of
    the result's layout must come with the same change in functions.py."""
    view = NAMED_VIEWS[view_case]
    _, x = x_over(view, torch.float32, device)
    torch.library.opcheck(ops.relu.default, (x,))
    out_view = random_view(case.rng, shape=tuple(x.shape), expand=False)
    out = out_view.over(poisoned_storage(out_view.storage_numel, torch.float32, device))
    torch.library.opcheck(ops.relu_out.default, (out, x))
    grad_view = random_view(case.rng, shape=tuple(x.shape))
    # No NaN in the gradient: opcheck compares outputs with assert_close, where NaN != NaN.
    grad = grad_view.over(random_input(grad_view.storage_numel, torch.float32, device, specials=False))
    torch.library.opcheck(ops.relu_backward.default, (grad, x))


# The binding allocates a non-dense x's result itself (one aoti_torch_empty_strided call, not
# the boxed empty_like, whose failure path crashed on a CUDA out-of-memory): its strides must
# be torch.empty_like's, the layout torch.relu gives, for the cases its stride sort decides:
# zero strides (expand), size-1 dimensions, equal strides, permuted and sliced views.
@pytest.mark.parametrize(
    "make",
    [
        lambda b: b[:1, :1].expand(3, 5),
        lambda b: b[0, :1].expand(4, 6).t(),
        lambda b: b[:, :1].expand(8, 3),
        lambda b: b[:, ::2].unsqueeze(1),
        lambda b: b[:, ::2].unsqueeze(2).transpose(0, 2),
        lambda b: b.t()[::2],
        lambda b: b.view(2, 4, 16)[:, :, ::3].permute(2, 0, 1),
        lambda b: b.view(8, 1, 16).expand(8, 3, 16)[:, :, 1:],
        lambda b: b.view(2, 4, 16)[:, :1, :].expand(2, 4, 16).transpose(0, 2),
    ],
    ids=["expand-2d", "expand-transposed", "expand-column", "unsqueezed-step", "unsqueezed-step-t",
         "transposed-step", "permuted-3d", "expanded-middle", "expanded-transposed-3d"],
)
def test_result_strides_are_empty_likes(kernel, device, make):
    base = torch.randn(8, 16, device=device)
    x = make(base)
    assert not x.is_contiguous()
    result = kernel.relu(x)
    assert result.stride() == torch.empty_like(x).stride() == torch.relu(x).stride(), describe(x)
    assert torch.equal(result, torch.where(x > 0, x, 0))
