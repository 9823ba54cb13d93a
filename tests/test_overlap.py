"""out and x as views of one buffer that share no element (x = b[:, ::2], out = b[:, 1::2]):
the binding walks them with no copy of x (issue 28), as torch does, and the noarch ops hand
them to torch's op as they are (the same overlap rule, _noarch.py). Seen through the aten ops
the op dispatches, which torch's profiler records: the copy is a new_empty (noarch: a clone)
and a copy_.
Pairs that do share elements must still be copied (the observation can fail). Correctness
of every alias pair: test_views.py."""

import pytest
import torch

from reference import assert_bitwise_equal, random_input, reference_relu

R, C = 12, 48
# (x, out) of one (R, C) base: element lattices offset within their common stride.
DISJOINT = {
    "even-odd-columns": lambda b: (b[:, ::2], b[:, 1::2]),
    "odd-even-columns": lambda b: (b[:, 1::2], b[:, ::2]),
    "interleaved-1d": lambda b: (b.view(-1)[::2], b.view(-1)[1::2]),
    "every-fourth-phase-2": lambda b: (b[:, ::4], b[:, 2::4]),
    "3d-inner-pairs": lambda b: (b.view(R, C // 4, 4)[:, :, 0::2], b.view(R, C // 4, 4)[:, :, 1::2]),
    "columns-of-other-stride-phase": lambda b: (b[:, 0::6][:, :4], b[:, 3::6][:, :4]),
}
# Pairs that share elements (or that this test cannot separate): x is copied first.
SHARING = {
    "shifted-along-the-lattice": lambda b: (b.view(-1)[::3][:-1], b.view(-1)[::3][1:]),
    "strides-2-and-3": lambda b: (b[:, 0:32:2], b[:, 1::3]),
}


def dispatched_ops(fn) -> set[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        fn()
    return {event.name for event in profile.events()}


def run_pair(kernel, device, pair, dtype=torch.float32):
    storage = random_input(R * C, dtype, device)
    x, out = pair(storage.view(R, C))
    assert x.shape == out.shape
    expected = reference_relu(x.clone())
    untouched = storage.clone()
    mask = torch.zeros(R * C, dtype=torch.bool, device=device)
    pair(mask.view(R, C))[1].fill_(True)
    ops = dispatched_ops(lambda: kernel.relu(x, out=out))
    assert_bitwise_equal(out, expected)
    assert_bitwise_equal(storage[~mask], untouched[~mask])
    return ops


@pytest.mark.parametrize("pair", list(DISJOINT))
def test_disjoint_interleaved_views_are_not_copied(kernel, device, pair):
    ops = run_pair(kernel, device, DISJOINT[pair])
    assert not ops & {"aten::copy_", "aten::clone", "aten::new_empty", "aten::empty_like"}, sorted(ops)


@pytest.mark.parametrize("pair", list(SHARING))
def test_views_sharing_elements_are_copied_first(kernel, device, pair):
    ops = run_pair(kernel, device, SHARING[pair])
    assert "aten::copy_" in ops, sorted(ops)
