"""The device helpers (resdecay_lib.nn.device), which build() and the training rely on."""
import hashlib

import numpy as np
import pytest
import torch

from resdecay_lib.nn.device import sha256_file


def test_resolve_device_accepts_auto_cpu_and_devices_and_rejects_the_rest():
    from resdecay_lib.nn.device import resolve_device
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", 3, "mps"):
        with pytest.raises(ValueError, match="device"):
            resolve_device(bad)


def test_pin_threads_sets_torch_threads_and_rejects_bad_counts():
    from resdecay_lib.nn.device import DEFAULT_THREADS, pin_threads
    before = torch.get_num_threads()
    try:
        assert pin_threads(1) == 1 and torch.get_num_threads() == 1
        assert pin_threads() == DEFAULT_THREADS == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n must be"):
            pin_threads(bad)


def test_manual_seed_all_makes_torch_and_numpy_repeat():
    import numpy as np
    from resdecay_lib.nn.device import manual_seed_all
    manual_seed_all(7)
    a = torch.rand(3), np.random.rand(3)
    manual_seed_all(7)
    b = torch.rand(3), np.random.rand(3)
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_sha256_file_matches_hashlib_over_block_boundaries(tmp_path):
    data = np.random.default_rng(0).integers(0, 256, size=3 * (1 << 20) + 7, dtype=np.uint8).tobytes()
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert sha256_file(empty) == hashlib.sha256(b"").hexdigest()
