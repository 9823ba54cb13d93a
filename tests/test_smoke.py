import torch

from reference import SUPPORTED_DTYPES, assert_bitwise_equal, random_input, reference_relu


def test_every_dtype_matches_reference(kernel, device):
    for dtype in SUPPORTED_DTYPES:
        x = random_input(1000, dtype, device)
        assert_bitwise_equal(kernel.relu(x), reference_relu(x))
