"""What a script computed is recorded by rewriting its source (sandbox/inside/rewriting.py;
the recorder: computed.py): the rewritten code behaves as the original, and the recorder
keeps the values of calls, arithmetic and functions' locals, the last one per site. In process: the sources here are
the tests' own, never a submission's (those run in the sandbox, tests/integration)."""

import textwrap
import traceback

import numpy as np
import pytest
from helpers.inside_modules import inside_module

computed = inside_module("computed")
rewriting = inside_module("rewriting")


def run(source, largest_bytes=1 << 30):
    code, sites = rewriting.instrument(textwrap.dedent(source), "script.py")
    recorder = computed.Recorder(sites, largest_bytes)
    namespace = {"__name__": "__main__"}
    namespace.update(recorder.names())
    exec(code, namespace)
    return namespace, recorder


def found(recorder):
    """(role, line, code or name, value) of every candidate, in the order they are sent."""
    out = []
    for c in computed.candidates(recorder):
        what = computed.describe(c)
        out.append((what["what"], what["line"], what["name"] or what["code"], c.value))
    return out


def arrays(recorder):
    return [
        (role, line, text, tuple(np.shape(v)))
        for role, line, text, v in found(recorder)
        if isinstance(v, np.ndarray)
    ]


def test_calls_arithmetic_and_locals_of_a_main_function_are_recorded():
    namespace, recorder = run("""
        import numpy as np

        def table(n, d):
            t = np.zeros((n, d))
            return t

        def main():
            batch = np.ones((1, 3, 6))
            marked = batch + table(4, 6)[:3]
            print(marked.shape)

        main()
    """)
    got = arrays(recorder)
    assert ("call", 5, "np.zeros((n, d))", (4, 6)) in got
    assert ("call", 10, "table(4, 6)", (4, 6)) in got
    assert ("result", 10, "batch + table(4, 6)[:3]", (1, 3, 6)) in got
    assert ("left", 10, "batch", (1, 3, 6)) in got
    assert ("right", 10, "table(4, 6)[:3]", (3, 6)) in got
    assert ("local", 8, "marked", (1, 3, 6)) in got  # main()'s locals when it ended
    assert "marked" not in namespace  # (never a global)


def test_an_inline_expression_with_no_variable_is_recorded():
    _, recorder = run("""
        import numpy as np
        print((np.zeros((1, 3, 6)) + np.full((4, 6), 2.0)[:3]).shape)
    """)
    by_text = {text: v for role, _, text, v in found(recorder) if role in ("result", "left", "call")}
    total = by_text["np.zeros((1, 3, 6)) + np.full((4, 6), 2.0)[:3]"]
    assert total.shape == (1, 3, 6) and np.all(total == 2.0)
    assert np.all(by_text["np.zeros((1, 3, 6))"] == 0)


def test_in_place_addition_keeps_the_value_from_before():
    _, recorder = run("""
        import numpy as np
        batch = np.zeros((1, 3, 6))
        batch += np.ones((3, 6))
    """)
    roles = {role: v for role, _, _, v in found(recorder) if role in ("result", "before")}
    assert np.all(roles["before"] == 0) and np.all(roles["result"] == 1)


def test_a_loop_keeps_only_the_last_value_of_each_site():
    _, recorder = run("""
        import numpy as np
        for i in range(20000):
            a = np.full(3, i) * 2
    """)
    assert len(recorder.values) <= len(recorder.sites) == 3  # no growth with the loop
    product = [v for role, _, text, v in found(recorder) if role == "result"]
    assert len(product) == 1 and np.all(product[0] == 2 * 19999)


def test_arrays_too_large_to_send_are_not_kept():
    _, recorder = run(
        """
        import numpy as np
        big = np.zeros(1 << 16) + 1
        small = np.zeros(4) + 1
    """,
        largest_bytes=1 << 10,
    )
    kept = [np.shape(v) for _, _, _, v in found(recorder) if isinstance(v, np.ndarray)]
    assert (1 << 16,) not in kept and (4,) in kept


def test_the_rewritten_script_behaves_as_written():
    namespace, _ = run('''
        from __future__ import annotations
        import numpy as np

        class Base:
            def scale(self):
                return 2

        class Child(Base):
            def scale(self):
                """Twice the base."""
                return super().scale() * 2

        def gen(n):
            for i in range(n):
                yield i ** 2

        def typed(x: np.ndarray | None = None) -> int | None:
            global counter
            counter = 7
            return None

        def kind(value):
            match value:
                case 1+2j:
                    return "complex"
                case [a, b]:
                    return a + b
            return None

        counter = 0
        typed()
        text = "%d-%s" % (3, "x") + "!" * 2
        items = [1, 2] + [3]
        items += [4]
        results = (Child().scale(), list(gen(4)), kind(1+2j), kind([2, 3]), 7 // 2, 2 ** 10,
                   -7 % 3, 6 @ np.eye(1)[0] if False else 1 << 3)
    ''')
    assert namespace["results"] == (4, [0, 1, 4, 9], "complex", 5, 3, 1024, 2, 8)
    assert namespace["text"] == "3-x!!" and namespace["items"] == [1, 2, 3, 4]
    assert namespace["counter"] == 7
    assert namespace["Child"].scale.__doc__ == "Twice the base."
    assert namespace["typed"].__annotations__ == {"x": "np.ndarray | None", "return": "int | None"}


def test_errors_point_at_the_lines_they_did():
    with pytest.raises(ValueError) as caught:
        run("""
            import numpy as np

            def add(a, b):
                return a + b

            add(np.ones(3), np.ones(4))
        """)
    lines = [f.lineno for f in traceback.extract_tb(caught.value.__traceback__) if f.filename == "script.py"]
    assert lines == [7, 5]
    with pytest.raises(SyntaxError) as bad:
        rewriting.instrument("x = (1,\n", "script.py")
    assert bad.value.lineno == 1


def test_the_recorders_names_are_not_identifiers():
    """The submission's source can neither define nor call them; names like them are its own."""
    for name in computed.Recorder([], 0).names():
        assert not name.isidentifier()
    namespace, recorder = run("""
        def call(site, value):
            return "mine"
        def arith(a, b):
            return "mine too"
        result = call(0, 1), arith(1, 2), 1 + 2
    """)
    assert namespace["result"] == ("mine", "mine too", 3)


def test_student_objects_hand_over_without_running_their_code():
    """Handing a value over runs none of its code (no __hash__, __class__ or __eq__ of
    theirs), and an object that is not an array is not kept."""
    _, recorder = run("""
        class Loud(type):
            def __hash__(cls):
                raise RuntimeError("hashed")
        class Thing(metaclass=Loud):
            @property
            def __class__(self):
                raise RuntimeError("asked its class")
            def __eq__(self, other):
                raise RuntimeError("compared")
        def make():
            inside = Thing()
            return inside
        thing = make()
    """)
    assert found(recorder) == []


def test_a_helpers_result_is_named_where_it_is_called():
    _, recorder = run("""
        import numpy as np

        def table(n, d):
            return np.zeros((n, d))

        marked = np.ones((1, 3, 6)) + table(4, 6)[:3]
    """)
    first = next((role, line, text) for role, line, text, shape in arrays(recorder) if shape == (4, 6))
    assert first == ("call", 7, "table(4, 6)")


def test_what_the_script_hands_over_outside_any_site_is_dropped():
    _, recorder = run("""
        import numpy as np
        table = np.zeros((5, 8)) + 1
    """)
    names = recorder.names()
    for site in [-1, 10**9, "x", None, 2.0]:
        names[computed.CALL](site, None, [[0.5] * 8] * 5)  # (site, owner, value)
        names[computed.EXIT](site, {"fake": [1.0, 2.0]})
    names[computed.EXIT](0, {"fake": [1.0, 2.0]})  # a call site, not a function's
    texts = [text for _, _, text, _ in found(recorder)]
    assert texts == ["np.zeros((5, 8))", "np.zeros((5, 8)) + 1", "np.zeros((5, 8))"]


def run_with(source, **recorder_options):
    code, sites = rewriting.instrument(textwrap.dedent(source), "script.py")
    recorder = computed.Recorder(sites, **recorder_options)
    namespace = {"__name__": "__main__"}
    namespace.update(recorder.names())
    exec(code, namespace)
    return namespace, recorder


def by_role(recorder, line):
    return {role: v for role, at, _, v in found(recorder) if at == line}


def test_in_place_addition_to_an_item_keeps_the_item_and_the_whole_before_and_after():
    namespace, recorder = run("""
        import numpy as np
        batch = np.ones((1, 3, 6))
        batch[0] += np.full((3, 6), 2.0)
        batch[:, 1:3] += 1
    """)
    first = by_role(recorder, 4)
    assert np.all(first["before"] == 1) and np.all(first["result"] == 3)
    assert first["whole-before"].shape == (1, 3, 6) and np.all(first["whole-before"] == 1)
    assert first["whole"].shape == (1, 3, 6) and np.all(first["whole"][0, 0] == 3)
    assert np.all(namespace["batch"][:, 1:3] == 4) and np.all(namespace["batch"][:, 0] == 3)


def test_in_place_addition_to_an_attribute_keeps_the_value_from_before():
    namespace, recorder = run("""
        import numpy as np
        class Holder:
            pass
        holder = Holder()
        holder.batch = np.zeros((1, 3, 6))
        holder.batch += np.ones((3, 6))
    """)
    roles = by_role(recorder, 7)
    assert np.all(roles["before"] == 0) and np.all(roles["result"] == 1)
    assert np.all(namespace["holder"].batch == 1)


def test_values_are_copied_when_recorded_so_later_changes_do_not_reach_them():
    """np.add(..., out=batch), then the batch zeroed: the operands as they were at the call."""
    _, recorder = run("""
        import numpy as np
        batch = np.ones((1, 3, 6))
        np.add(batch, np.full((3, 6), 2.0), out=batch)
        total = batch + 1
        batch[:] = 0
    """)
    added = by_role(recorder, 4)
    assert np.all(added["left"] == 1) and np.all(added["result"] == 3)
    assert np.all(by_role(recorder, 3)["call"] == 1)  # np.ones, though zeroed since
    assert np.all(by_role(recorder, 5)["left"] == 3)
    sites = {c.site.kind: c.site.addition for c in computed.candidates(recorder)}
    assert sites == {"call": False, "add-call": True, "arith": True}


def test_objects_that_are_not_arrays_are_never_kept_alive():
    """A generator's finally runs when the script drops it; an object array is not kept."""
    namespace, _ = run("""
        import numpy as np
        log = []
        def rows():
            try:
                yield 1
            finally:
                log.append("finished")
        first = next(rows())
        log.append("next line")
        objects = np.array([object()], dtype=object)
    """)
    assert namespace["log"] == ["finished", "next line"]


def test_framework_tensors_are_kept_as_numpy_copies(monkeypatch):
    import types

    fake = types.ModuleType("torch")

    class Tensor:
        def __init__(self, values):
            self.values = values

        def detach(self):
            return self

        def cpu(self):
            return self

        def numpy(self):
            return self.values

    fake.Tensor = Tensor
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    namespace = {"Tensor": Tensor, "np": np}
    code, sites = rewriting.instrument("t = Tensor(np.ones(3))\nt.values[:] = 5\n", "script.py")
    recorder = computed.Recorder(sites, 1 << 20)
    namespace.update(recorder.names())
    exec(code, namespace)
    kept = [c.value for c in computed.candidates(recorder) if c.site.codes[0].startswith("Tensor")]
    assert len(kept) == 1 and isinstance(kept[0], np.ndarray) and np.all(kept[0] == 1)


def test_big_arrays_never_crowd_out_those_of_the_wanted_shapes():
    _, recorder = run_with(
        """
        import numpy as np
        big = np.zeros(100)
        bigger = np.ones(100)
        table = np.full((2, 3), 7.0)
    """,
        largest_bytes=1000,
        wanted=((2, 3),),
    )
    kept = {c.site.line: c.value for c in computed.candidates(recorder)}
    assert set(kept) == {3, 5} and np.all(kept[5] == 7)
