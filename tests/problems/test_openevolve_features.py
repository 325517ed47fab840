"""OpenEvolve's ``feature_dimensions`` / ``feature_bins`` as descriptors: built-in
complexity and diversity (the engine's size and distance), score, metric-named dimensions,
OpenEvolve's bin rule, and its defaults when the config names none."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from evoforge.archive import Archive
from evoforge.evolve import RunConfig, resolve, resume_run, start_run
from evoforge.islands import SeenRanges
from evoforge.problems import ProblemSpecError
from evoforge.problems.adapters import adapt
from evoforge.problems.adapters._openevolve_features import feature_dimensions

EVALUATOR_RETURNING = """
import importlib.util


def evaluate(path):
    spec = importlib.util.spec_from_file_location("p", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q = float(module.QUALITY)
    return {returns}
"""
EVALUATOR = EVALUATOR_RETURNING.format(
    returns='{"combined_score": q, "spread": min(1.0, q * 3 % 1.0)}'
)
PROGRAM = "# EVOLVE-BLOCK-START\nQUALITY = 0.25\n# EVOLVE-BLOCK-END\n"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))


def _folder(root, config):
    folder = root / "oe"
    folder.mkdir()
    (folder / "initial_program.py").write_text(PROGRAM)
    (folder / "evaluator.py").write_text(textwrap.dedent(EVALUATOR))
    if config is not None:
        (folder / "config.yaml").write_text(textwrap.dedent(config))
    return folder


def _ok_programs(tmp_path, folder, *, budget: int, seed: int) -> list:
    """The ok programs of an offline run of the OpenEvolve ``folder``."""
    (problem,) = resolve(str(folder)).problems
    db = tmp_path / "run.db"
    config = RunConfig(problem=str(problem.spec_path.parent), budget=budget, workers=1, seed=seed)
    asyncio.run(start_run(config.replace(model="offline/mutator"), db))
    with Archive(db) as archive:
        run = archive.latest_run()
        return [p for p in archive.programs(run.id) if p.status == "ok"]


def test_without_feature_dimensions_openevolves_defaults_apply(tmp_path):
    adapted = adapt(_folder(tmp_path, None))
    (problem,) = adapted.problems
    # complexity and diversity, 10 bins each (max(10, 100 ** (1/2)))
    assert [(d.name, d.low, d.high, d.bins) for d in problem.descriptors] == [
        ("size", -4.4, 4.4, 10),
        ("distance", 0.0, 1.0, 10),
    ]
    assert problem.options["feature_metrics"] == {}  # the engine computes both
    assert problem.options["fitness_exclude"] == ["complexity", "diversity"]
    assert any(
        "OpenEvolve's default dimensions: complexity -> built-in size" in n for n in adapted.notes
    )


def test_metric_named_and_builtin_dimensions_with_their_bins(tmp_path):
    config = """
    database:
      feature_dimensions: [spread, diversity, score]
      feature_bins: {spread: 4, diversity: 6}
    """
    (problem,) = adapt(_folder(tmp_path, config)).problems
    assert {d.name: (d.low, d.high, d.bins) for d in problem.descriptors} == {
        "spread": (0.0, 1.0, 4),
        "distance": (0.0, 1.0, 6),
        "fitness": (0.0, 1.0, 10),  # a dict without it: OpenEvolve's 10
    }
    assert problem.options["feature_metrics"] == {"spread": "spread", "fitness": "fitness"}
    assert problem.options["fitness_exclude"] == ["spread", "diversity", "score"]


def test_an_int_feature_bins_has_openevolves_minimum_from_archive_size():
    one = feature_dimensions(["complexity"], 5, None, "")
    assert one.descriptors == {"size": (-4.4, 4.4, 100)}  # max(5, 100 ** 1)
    three = feature_dimensions(["complexity", "diversity", "x"], 5, 64, "")
    assert {d[2] for d in three.descriptors.values()} == {5}  # max(5, ceil(64 ** (1/3)) = 4)


def test_a_dimension_the_evaluator_names_is_a_metric_even_if_built_in():
    features = feature_dimensions(
        ["complexity"], 10, None, 'def evaluate(p):\n    return {"complexity": 1}\n'
    )
    assert features.descriptors == {"complexity": (0.0, 1.0, 100)}
    assert features.metrics == {"complexity": "complexity"}


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("feature_dimensions: complexity", "expected a list of names"),
        ("feature_dimensions: []", "is empty"),
        ("feature_bins: 0", "expected a whole number >= 1"),
        ("feature_bins: {complexity: many}", "expected a whole number >= 1"),
    ],
)
def test_bad_feature_settings_name_the_setting(tmp_path, setting, message):
    with pytest.raises(ProblemSpecError, match=message):
        adapt(_folder(tmp_path, f"database:\n  {setting}\n"))


def test_a_run_places_programs_by_the_metric_and_the_engines_diversity(tmp_path):
    config = """
    database:
      feature_dimensions: [spread, diversity]
      feature_bins: 5
    """
    ok = _ok_programs(tmp_path, _folder(tmp_path, config), budget=12, seed=3)
    assert ok and all(set(p.descriptors) == {"spread", "distance"} for p in ok)
    seed = ok[0]
    assert seed.metrics["spread"] == pytest.approx(0.75)
    assert seed.descriptors["spread"] == 0.5  # the first value seen: the middle
    assert seed.cell is not None
    assert len({p.cell for p in ok}) > 1  # not one cell per island


def test_a_named_config_of_the_folder_is_used_as_openevolve_run_config_uses_it(tmp_path):
    """OpenEvolve's circle_packing has config_phase_1.yaml and config_phase_2.yaml and no
    config.yaml: the folder runs on the defaults and says how to name one; naming the file
    maps it, under a name of its own."""
    folder = _folder(tmp_path, None)
    (folder / "config_phase_1.yaml").write_text(
        "database:\n  feature_dimensions: [spread]\n  feature_bins: 4\n"
    )
    (folder / "config_phase_2.yaml").write_text("database:\n  feature_bins: 7\n")
    plain = adapt(folder)
    assert [d.name for d in plain.problems[0].descriptors] == ["size", "distance"]
    (note,) = [n for n in plain.notes if n.startswith("no config.yaml")]
    assert "config_phase_1.yaml, config_phase_2.yaml" in note
    assert f"evoforge run {folder / 'config_phase_1.yaml'}" in note

    resolved = resolve(str(folder / "config_phase_1.yaml"))
    (problem,) = resolved.problems
    assert problem.name == "oe_oe_config_phase_1"
    assert [d.name for d in problem.descriptors] == ["spread"]  # its feature_dimensions
    assert not any(n.startswith("no config.yaml") for n in resolved.notes)


def test_a_yaml_file_outside_an_openevolve_folder_is_not_taken_for_one(tmp_path):
    (tmp_path / "settings.yaml").write_text("a: 1\n")
    assert adapt(tmp_path / "settings.yaml") is None


def test_metric_dimensions_are_min_max_scaled_as_openevolve_does():
    ranges = SeenRanges()
    assert ranges.scale("t", 250.0) == 0.5  # one value: the middle, as OpenEvolve
    assert ranges.scale("t", 150.0) == 0.0  # a new smallest
    assert ranges.scale("t", 200.0) == 0.5
    assert (ranges.scale("t", 450.0), ranges.scale("s", 0.003)) == (1.0, 0.5)
    assert ranges.scale("t", 300.0) == 0.5
    assert ranges.seen == {"t": (150.0, 450.0), "s": (0.003, 0.003)}
    assert SeenRanges({"t": (0.0, 10.0)}).scale("t", 5.0) == 0.5  # a resumed run's ranges


# far from [0, 1]: a time in milliseconds and a score of a few thousandths
SCALED_EVALUATOR = EVALUATOR_RETURNING.format(
    returns='{"combined_score": abs(q) / 100, "latency_ms": 1000 * abs(q)}'
)


def _scaled_folder(tmp_path):
    """A folder whose feature dimensions are a metric in milliseconds and the score."""
    config = """
    database:
      feature_dimensions: [latency_ms, score]
      feature_bins: 5
    """
    folder = _folder(tmp_path, config)
    (folder / "evaluator.py").write_text(textwrap.dedent(SCALED_EVALUATOR))
    return folder


def test_metrics_on_any_scale_spread_over_the_bins(tmp_path):
    folder = _scaled_folder(tmp_path)
    ok = _ok_programs(tmp_path, folder, budget=16, seed=5)
    latencies = {p.metrics["latency_ms"] for p in ok}
    assert len(latencies) > 2, latencies  # the offline model varied QUALITY
    assert all(0.0 <= p.descriptors["latency_ms"] <= 1.0 for p in ok)
    # on a fixed [0, 1] range every one of these would share the last latency bin
    assert len({min(int(p.descriptors["latency_ms"] * 5), 4) for p in ok}) > 1
    assert len({p.cell for p in ok}) > 1


def test_a_resumed_run_scales_over_every_value_its_run_has_seen(tmp_path):
    """The ranges are the run's, not a session's: after a resume, a program is placed
    against the values seen before the stop too (in OpenEvolve's order: its own included)."""
    folder = _scaled_folder(tmp_path)
    (problem,) = resolve(str(folder)).problems
    db = tmp_path / "run.db"
    config = RunConfig(problem=str(problem.spec_path.parent), budget=10, workers=1, seed=5)
    info, _ = asyncio.run(start_run(config.replace(model="offline/mutator"), db))
    with Archive(db) as archive:
        stop = max(p.seq for p in archive.programs(info.id))  # the first session's last
    asyncio.run(resume_run(info.id, db, budget=20))
    with Archive(db) as archive:
        ok = [p for p in archive.programs(info.id) if p.status == "ok"]
        stored = archive.metric_ranges(info.id, ["latency_ms", "no_such_metric"])
    before = [p for p in ok if p.seq <= stop]
    after = [p for p in ok if p.seq > stop]
    assert before and after
    assert set(stored) == {"latency_ms"}  # a metric no program has is left out
    ranges = SeenRanges()  # replayed in the order the programs were stored
    for p in ok:
        expected = ranges.scale("latency_ms", p.metrics["latency_ms"])
        assert p.descriptors["latency_ms"] == pytest.approx(expected), p.seq
        expected = ranges.scale("fitness", p.metrics["fitness"])
        assert p.descriptors["fitness"] == pytest.approx(expected), p.seq
    assert stored["latency_ms"] == ranges.seen["latency_ms"]
