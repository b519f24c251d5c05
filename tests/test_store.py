import json
import os

import dask.array as da
import numpy as np
import pytest
import zarr

from daskfair.store import (
    STORE_FORMAT,
    IncompleteRunError,
    StoreError,
    create_run,
    open_run,
    to_json,
)


def test_roundtrip_numpy_dask_attrs(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="test", params={"k": np.int64(3), "mu": (0.1, 0.2)})
    x = np.arange(12.0).reshape(4, 3)
    run.write_array("a/x", x)
    run.write_array("d", da.arange(100, chunks=30))
    run.set_attrs(metric=np.float32(0.5), table={"ACC": [0.1, float("nan")]})
    run.mark_complete(done=True)
    back = open_run(path)
    assert back.kind == "test" and back.is_complete
    assert back.params == {"k": 3, "mu": [0.1, 0.2]}
    np.testing.assert_array_equal(back.read_array("a/x"), x)
    np.testing.assert_array_equal(back.read_array("d"), np.arange(100))
    assert back.attrs["table"] == {"ACC": [0.1, None]}
    assert back.attrs["done"] is True
    info = back.info
    assert info["format"] == STORE_FORMAT and "numpy" in info["versions"]
    assert info["completed"] >= info["created"]
    with pytest.raises(KeyError, match="has no array 'nope'"):
        back.read_array("nope")


def test_incomplete_run_refused(tmp_path):
    path = tmp_path / "run.zarr"
    run = create_run(path, kind="test")
    run.write_array("x", np.ones(3))
    with pytest.raises(IncompleteRunError, match="did not finish.*resume"):
        open_run(path)
    assert open_run(path, allow_incomplete=True).status == "running"


def test_existing_store_needs_overwrite(tmp_path):
    path = tmp_path / "run.zarr"
    create_run(path, kind="test").mark_complete()
    with pytest.raises(FileExistsError, match="already exists.*--overwrite"):
        create_run(path, kind="test")
    run = create_run(path, kind="other", overwrite=True)
    assert run.kind == "other" and run.status == "running"


def test_bad_stores(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        open_run(tmp_path / "missing.zarr")
    plain = tmp_path / "plain.zarr"
    zarr.open_group(str(plain), mode="w").attrs["x"] = 1
    with pytest.raises(StoreError, match="not a daskfair run"):
        open_run(plain)
    # a store from another format version
    other = tmp_path / "other.zarr"
    run = create_run(other, kind="test")
    info = run.info
    info["format"] = STORE_FORMAT + 1
    run.group.attrs["daskfair"] = info
    with pytest.raises(StoreError, match="format 2.*reads format 1"):
        open_run(other)
    # corrupt metadata
    corrupt = tmp_path / "corrupt.zarr"
    create_run(corrupt, kind="test").mark_complete()
    (corrupt / "zarr.json").write_text("{not json")
    with pytest.raises(StoreError, match="not a readable zarr group.*corrupt"):
        open_run(corrupt)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_no_write_permission(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="no write permission"):
            create_run(ro / "run.zarr", kind="test")
    finally:
        ro.chmod(0o700)


def test_no_write_permission_reported(tmp_path, monkeypatch):
    # Also checked when running as root (CI): os.access says no, the error says what to do.
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    with pytest.raises(PermissionError, match="no write permission.*writable directory"):
        create_run(tmp_path / "run.zarr", kind="test")


def test_reserved_and_non_numeric(tmp_path):
    run = create_run(tmp_path / "r.zarr", kind="test")
    with pytest.raises(ValueError, match="reserved"):
        run.set_attrs(params={})
    with pytest.raises(TypeError, match="as an attribute"):
        run.write_array("s", np.array(["a", "b"]))
    unknown = da.from_array(np.arange(10), chunks=5)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        run.write_array("u", unknown[unknown > 3])


def test_to_json():
    out = to_json({"a": np.arange(3), 1: (np.float64(1.5), float("inf"))})
    assert out == {"a": [0, 1, 2], "1": [1.5, None]}
    json.dumps(out)
