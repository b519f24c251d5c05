"""Every numba block function compiles one signature for the inputs daskfair passes it, whatever
the dtypes, layouts and containers a user gives (each extra signature is seconds of compiling
in every new environment: docs/design.md#first-calls)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

MODULES = ("daskfair.safairkm._block_functions", "daskfair.ensemble._block_functions",
           "daskfair.fkr._binning", "daskfair.metrics._audit_kernels")

# a fresh process: the other tests' calls must not count
SCRIPT = textwrap.dedent("""
    import importlib, json
    import dask.array as da
    import numba
    import numpy as np
    import pandas as pd
    import daskfair

    X, s, _ = (np.asarray(a) for a in daskfair.make_fair_blobs(600, n_clusters=3,
                                                                random_state=0))
    text = np.where(s == 1, "f", "m")
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    for X_in, s_in in ((X, s), (X.astype(np.float32), text), (X[:, ::-1], s.astype(float)),
                       (pd.DataFrame(X), pd.Series(text)), (da.from_array(X, chunks=100), s)):
        daskfair.SAFairKMeans(3, max_iter=5, random_state=0).fit(X_in, sensitive_features=s_in)
        daskfair.pareto_front(X_in, sensitive_features=s_in, n_clusters=3, n_init=4,
                              max_iter=4, random_state=0)
    rng = np.random.default_rng(0)
    for dtype in (np.int64, np.int32, np.int16, np.uint8):
        base = rng.integers(0, 3, (600, 6)).astype(dtype)
        for fce in (daskfair.FairClusteringEnsemble(3, random_state=0),
                    daskfair.FairClusteringEnsemble("auto", random_state=0)):
            fce.fit(base, sensitive_features=text)
        daskfair.FairClusteringEnsemble(3, random_state=0).fit(
            np.asfortranarray(base)[:, 1:], sensitive_features=s)
    for X_in in (X, X.astype(np.float32), da.from_array(X, chunks=100)):
        daskfair.FairKernelClassifierCV(n_landmarks=30, cv=2, random_state=0).fit(
            X_in, y, sensitive_features=text)
    import dask.dataframe as dd
    import pyarrow as pa
    from daskfair.metrics import audit
    big = np.tile(text, 100)  # enough rows for the dense table of score bins
    score = rng.random(len(big)) * 1.2 - 0.1
    for groups in (pd.Series(big, dtype=pd.StringDtype("pyarrow")),
                   pd.Series(pd.arrays.ArrowExtensionArray(pa.array(big, type=pa.string()))),
                   pd.Series(np.where(score > 1, None, big), dtype=pd.StringDtype("pyarrow")),
                   big):
        for n in (len(big), 50):
            labels = (score[:n] > 0.5).astype(np.int64)
            audit(labels, labels, sensitive_features=groups[:n], y_score=score[:n], n_boot=0)
            audit(labels.astype(bool), labels.astype(np.int8), sensitive_features=groups[:n],
                  n_boot=0)
    frame = dd.from_pandas(pd.DataFrame({"g": pd.Series(big, dtype=pd.StringDtype("pyarrow")),
                                         "y": (score > 0.5).astype(int), "s": score}),
                           npartitions=3)
    audit(frame["y"], frame["y"], sensitive_features=frame[["g"]], y_score=frame["s"],
          n_boot=0)
    out = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in dir(module):
            f = getattr(module, attr)
            if isinstance(f, numba.core.registry.CPUDispatcher) and f.signatures:
                out[f"{name}.{attr}"] = [[str(t) for t in sig] for sig in f.signatures]
    print(json.dumps(out))
""")


@pytest.mark.cluster  # a process of its own that compiles (or loads) every block function
def test_every_block_function_compiles_one_signature(tmp_path):
    code = f"MODULES = {MODULES!r}\n{SCRIPT}"
    # an empty cache: every function compiles, the ones called inside others too (code
    # loaded from a cache leaves those without signatures, and the check without teeth)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(compiled) >= 18  # the calls above reach the block functions
    twice = {name: sigs for name, sigs in compiled.items() if len(sigs) > 1}
    assert not twice, json.dumps(twice, indent=1)
