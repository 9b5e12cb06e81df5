"""The naive baseline: the same checks as tasks/positional-encoding, written the obvious way
as pytest + Hypothesis tests that import the submission into the test process.

Run one process per submission: SUBMISSION=path python -m pytest -q bench/naive/test_naive_pe.py
(Unsafe by design: this is what grader replaces. Used only by bench/check_speed.py.)
"""

import importlib.util
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = os.path.join(HERE, "..", "..", "tasks", "positional-encoding")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load(os.path.join(TASK, "reference.py"), "reference")
sub = _load(os.environ["SUBMISSION"], "submission")
TOL = dict(rtol=1e-6, atol=1e-6)
SETTINGS = dict(derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def table_args(draw, min_d=1, parity=None, budget=16384):
    d = draw(st.integers(min_d, 1024))
    if parity == "even":
        d = d + d % 2 if d < 1024 else 1024
    if parity == "odd":
        d = d - (1 - d % 2) if d > 1 else 1
    n = draw(st.integers(1, max(1, min(8192, budget // d))))
    return n, d


@st.composite
def token_arrays(draw, min_lead=0, max_lead=0):
    t, d = draw(st.integers(1, 32)), draw(st.integers(1, 32))
    lead = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(min_lead, max_lead)))]
    return draw(hnp.arrays(np.float64, tuple(lead) + (t, d), elements=st.floats(-100, 100, allow_nan=False)))


def test_examples():
    np.testing.assert_allclose(sub.sinusoidal_pe(3, 4), ref.sinusoidal_pe(3, 4), **TOL)
    np.testing.assert_allclose(sub.sinusoidal_pe(2, 5), ref.sinusoidal_pe(2, 5), **TOL)
    x = np.ones((2, 2))
    np.testing.assert_allclose(sub.add_positional_encoding(x), ref.add_positional_encoding(x), **TOL)


@settings(max_examples=10, **SETTINGS)
@given(table_args())
def test_table_type(nd):
    out = sub.sinusoidal_pe(*nd)
    assert isinstance(out, np.ndarray) and np.issubdtype(out.dtype, np.floating)


@settings(max_examples=40, **SETTINGS)
@given(table_args())
def test_table_shape(nd):
    assert np.shape(sub.sinusoidal_pe(*nd)) == nd


@settings(max_examples=20, **SETTINGS)
@given(table_args())
def test_row_zero(nd):
    np.testing.assert_allclose(np.asarray(sub.sinusoidal_pe(*nd))[0], ref.sinusoidal_pe(*nd)[0], **TOL)


@settings(max_examples=30, **SETTINGS)
@given(table_args(min_d=2))
def test_sin_cos_columns(nd):
    np.testing.assert_allclose(
        np.asarray(sub.sinusoidal_pe(*nd))[:, :2], ref.sinusoidal_pe(*nd)[:, :2], **TOL
    )


@settings(max_examples=50, **SETTINGS)
@given(table_args(min_d=2, parity="even"))
def test_exponent(nd):
    np.testing.assert_allclose(sub.sinusoidal_pe(*nd), ref.sinusoidal_pe(*nd), **TOL)


@settings(max_examples=20, **SETTINGS)
@given(table_args(parity="odd"))
def test_odd_last_column(nd):
    np.testing.assert_allclose(np.asarray(sub.sinusoidal_pe(*nd))[:, -1], 0.0, **TOL)


@settings(max_examples=40, **SETTINGS)
@given(table_args(parity="odd"))
def test_odd_exponent(nd):
    np.testing.assert_allclose(sub.sinusoidal_pe(*nd), ref.sinusoidal_pe(*nd), **TOL)


@settings(max_examples=30, **SETTINGS)
@given(st.integers(1, 512), st.integers(1, 256), st.floats(2.0, 100000.0))
def test_table_base(n, d, base):
    np.testing.assert_allclose(sub.sinusoidal_pe(n, d, base), ref.sinusoidal_pe(n, d, base), **TOL)


@settings(max_examples=30, **SETTINGS)
@given(token_arrays())
def test_add_2d(x):
    np.testing.assert_allclose(sub.add_positional_encoding(x.copy()), ref.add_positional_encoding(x), **TOL)


@settings(max_examples=40, **SETTINGS)
@given(token_arrays(1, 3))
def test_add_batch(x):
    np.testing.assert_allclose(sub.add_positional_encoding(x.copy()), ref.add_positional_encoding(x), **TOL)


@settings(max_examples=20, **SETTINGS)
@given(token_arrays(0, 2), st.floats(2.0, 100000.0))
def test_add_base(x, base):
    np.testing.assert_allclose(
        sub.add_positional_encoding(x.copy(), base), ref.add_positional_encoding(x, base), **TOL
    )


@settings(max_examples=10, **SETTINGS)
@given(token_arrays(0, 2))
def test_add_type(x):
    out = sub.add_positional_encoding(x.copy())
    assert isinstance(out, np.ndarray) and np.issubdtype(out.dtype, np.floating)


@settings(max_examples=30, **SETTINGS)
@given(token_arrays(0, 3))
def test_add_no_mutation(x):
    before = x.copy()
    out = sub.add_positional_encoding(x)
    np.testing.assert_array_equal(x, before)
    assert not np.may_share_memory(out, x)
