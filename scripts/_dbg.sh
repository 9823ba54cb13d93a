set -x
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl
export PYTHONPATH=$PWD/.site HF_HUB_OFFLINE=1 RELU_CUDA_ARCHS=9.0
python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 > $OUT/build.log 2>&1 || tail -20 $OUT/build.log
RELU_TEST_TARGETS=cuda timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/test_relu_squared.py tests/test_gated.py tests/test_kernelize.py -k "compiled or family" 2>&1 | tail -40
