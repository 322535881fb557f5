"""The real-data benchmark's measures (`compaction.eval.benchmark`, the new metrics) and the
bench script's handling of absent data."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import pytest

from compaction.dialects import OPENAI
from compaction.eval.benchmark import (
    Pooled,
    RunMeasure,
    counter_for,
    measure,
    measure_growing,
    protected_tokens,
    shared_data_dir,
    shortfalls,
    source_of,
)
from compaction.eval.families import family_sessions
from compaction.eval.metrics import (
    budget_used,
    empty_summaries,
    last_message_verbatim,
    restated_stale,
)
from compaction.eval.probes import Fact
from compaction.eval.sessions import EvalSession
from compaction.messages import Conversation, Message, SummaryPart, TextPart

BENCH = Path(__file__).resolve().parents[1] / "bench"


def chat(*texts: tuple[str, str]) -> Conversation:
    return OPENAI.decode([{"role": r, "content": t} for r, t in texts])


@cache
def family_session() -> EvalSession:
    return family_sessions("cc-style", (11,), 30_000)[0]


# --- the metrics ----------------------------------------------------------------------------------


def test_last_message_verbatim_compares_role_and_text() -> None:
    before = chat(("user", "a"), ("assistant", "b"), ("user", "the last one"))
    assert last_message_verbatim(before, chat(("user", "x"), ("user", "the last one")))
    assert not last_message_verbatim(before, chat(("user", "a"), ("user", "the last on")))
    assert not last_message_verbatim(before, chat(("user", "a"), ("assistant", "the last one")))


def test_empty_summaries_are_markers_of_nothing_and_envelopes_without_a_body() -> None:
    before = chat(("user", "task"), ("assistant", "work"), ("user", "more"))
    zero = chat(("user", "task"), ("assistant", "[compacted: 11 messages → 0 chars]"))
    assert empty_summaries(before, zero) == 1
    envelope = Message(
        role="user",
        parts=(
            SummaryPart(
                "[compacted: 1 messages → 119 chars]\n<earlier-context-summary>\nSummary of "
                "earlier context by the compaction system, not the user.\n"
                "</earlier-context-summary>"
            ),
        ),
    )
    assert empty_summaries(before, before.with_messages((envelope, *before.messages[1:]))) == 1
    full = Message(role="user", parts=(SummaryPart("[compacted: 3 messages]\n- edited a.py"),))
    assert empty_summaries(before, before.with_messages((full, *before.messages[1:]))) == 0
    assert empty_summaries(before, before) == 0  # what was there before is not added


def test_a_stale_value_restated_in_the_compactions_own_words_is_stale_as_current() -> None:
    fact = Fact(
        id="ttl", category="changed_value", text="cache TTL is 30 minutes",
        probe=("cache TTL", "30 minutes"), depth="early", cued=False, critical=True,
        stale=("10 minutes",),
    )  # fmt: skip
    before = chat(
        ("user", "The cache TTL should be 10 minutes for this deployment."),
        ("assistant", "ok"),
        ("user", "Make the cache TTL 30 minutes instead of 10 minutes, please."),
        ("assistant", "Done."),
    )

    def summarized(*lines: str) -> Conversation:
        summary = Message(role="user", parts=(SummaryPart("\n".join(lines)),))
        return before.with_messages((summary, before.messages[-1]))

    table = summarized("## Values", "- cache TTL: 10 minutes")
    assert restated_stale([fact], before, table) == [fact]
    quoted = summarized(
        "- The cache TTL should be 10 minutes for this deployment.",
        "- Make the cache TTL 30 minutes instead of 10 minutes, please.",
    )
    assert restated_stale([fact], before, quoted) == []
    current = summarized("- cache TTL: 30 minutes (was 10 minutes)")
    assert restated_stale([fact], before, current) == []
    # A later message that shows the current value supersedes what the summary said.
    superseded = before.with_messages(
        (
            Message(role="user", parts=(SummaryPart("- cache TTL: 10 minutes"),)),
            *before.messages[2:],
        )
    )
    assert restated_stale([fact], before, superseded) == []
    # So does the verbatim text after the summary in the same message (Anthropic Messages
    # fold a summary into the user turn holding the next tool result).
    folded = before.with_messages(
        (
            Message(
                role="user",
                parts=(
                    SummaryPart("- cache TTL: 10 minutes"),
                    TextPart("Make the cache TTL 30 minutes instead of 10 minutes, please."),
                ),
            ),
            before.messages[-1],
        )
    )
    assert restated_stale([fact], before, folded) == []
    # What comes before the summary in its message does not.
    first = before.with_messages(
        (
            Message(
                role="user",
                parts=(
                    TextPart("Make the cache TTL 30 minutes instead of 10 minutes, please."),
                    SummaryPart("- cache TTL: 10 minutes"),
                ),
            ),
            before.messages[-1],
        )
    )
    assert restated_stale([fact], before, first) == [fact]


def test_a_line_marked_closed_at_its_start_states_nothing_as_current() -> None:
    # "- [replaced] Expiry through a queue: … `delaySeconds` …": a step the line itself says
    # was replaced, however far into it the old form comes. Unmarked, it still counts.
    fact = Fact(
        id="expiry", category="decision", text="holds expire from a cron sweep",
        probe=("cron trigger",), depth="early", cued=False, critical=True,
        stale=("delaySeconds",),
    )  # fmt: skip
    before = chat(
        ("assistant", "Plan: expiry through a queue, one message per hold."),
        ("assistant", "Moving expiry to a cron trigger."),
    )
    step = "Expiry through a queue in the compaction's words: each hold sends a message with "
    for mark, counted in (("[replaced] ", False), ("[dropped] ", False), ("", True)):
        summary = Message(role="user", parts=(SummaryPart(f"- {mark}{step}`delaySeconds` set"),))
        after = before.with_messages((summary,))
        assert (restated_stale([fact], before, after) == [fact]) is counted, mark


def test_a_command_the_summary_quotes_in_backticks_is_history_not_a_claim() -> None:
    # "`sed -n '1,40p' apps/old/export.ts` → ok" under the commands run quotes what ran
    # (the user later ruled that file out); a line naming the old file in the summary's own
    # words still states it.
    fact = Fact(
        id="route", category="file_modified", text="the export route",
        probe=("packages/reports/src/export.ts",), depth="early", cued=False, critical=True,
        stale=("apps/old/export.ts",),
    )  # fmt: skip
    before = chat(
        ("user", "Add the CSV export."),
        ("assistant", "Reading it: sed -n '1,40p' apps/old/export.ts"),
        ("user", "No, not that file — packages/reports/src/export.ts."),
        ("assistant", "Editing packages/reports/src/export.ts."),
    )

    def summarized(line: str) -> Conversation:
        summary = Message(role="user", parts=(SummaryPart(line),))
        return before.with_messages((summary, Message.text_message("assistant", "Done.")))

    quoted = summarized("- `sed -n '1,40p' apps/old/export.ts` → ok")
    assert restated_stale([fact], before, summarized("- Files: apps/old/export.ts")) == [fact]
    assert restated_stale([fact], before, quoted) == []
    # A file listed as deleted is said to be gone, not to stand.
    gone = summarized("- apps/old/export.ts (deleted)")
    assert restated_stale([fact], before, gone) == []
    assert restated_stale([fact], before, summarized("- apps/old/export.ts (modified)")) == [fact]


def test_a_superseded_form_the_summary_negates_is_not_stated_as_current() -> None:
    # "right — no `insert_rows_now`." says the plan is gone; "insert_rows_now" still in use
    # would state it.
    fact = Fact(
        id="jobs", category="decision", text="one job per chunk",
        probe=("ChunkImportWorker",), depth="middle", cued=False, critical=True,
        stale=("insert_rows_now", "FileImportWorker"),
    )  # fmt: skip
    before = chat(
        ("assistant", "Plan: write the rows in the request through insert_rows_now/3."),
        ("user", "Not in the request: one FileImportWorker per file."),
        ("assistant", "Then per chunk: one ChunkImportWorker job per 1,000 rows."),
        ("assistant", "Done."),
    )

    def summarized(line: str) -> Conversation:
        summary = Message(role="user", parts=(SummaryPart(line),))
        return before.with_messages((summary, before.messages[-1]))

    negations = (
        "- right — no `insert_rows_now`.",
        "- dropped FileImportWorker",
        "- not insert_rows_now any more",
        "- without the FileImportWorker job",
    )
    for negated in negations:
        assert restated_stale([fact], before, summarized(negated)) == [], negated
    assert restated_stale([fact], before, summarized("- rows go via insert_rows_now")) == [fact]
    assert restated_stale([fact], before, summarized("- no retries; FileImportWorker")) == [fact]


def test_the_protected_content_is_what_the_compactor_keeps_verbatim() -> None:
    # System, the first user message, the live user turn (the last one the user wrote) and
    # the last message: a target below them all is one no compaction can meet.
    convo = Conversation(
        (
            Message.text_message("system", "You are terse."),
            Message.text_message("user", "Here is a demonstration of the interface."),
            Message.text_message("assistant", "Noted. " * 200),
            Message.text_message("user", "Now fix the failing import in " + "app.py " * 100),
            Message.text_message("assistant", "Looking at it. " * 200),
            Message.text_message("assistant", "Done."),
        )
    )
    m = convo.messages
    counter = counter_for(convo)
    assert protected_tokens(convo) == counter.total([m[0], m[1], m[3], m[5]])
    assert protected_tokens(convo) > counter.total([m[0], m[1], m[5]])


def test_budget_used_is_tokens_after_over_target() -> None:
    assert budget_used(900, 1000) == 0.9
    assert budget_used(5, 0) == 5.0


# --- runs -----------------------------------------------------------------------------------------


def test_a_run_measures_everything_the_benchmark_reports() -> None:
    session = family_session()
    run = measure(session, "truncate", 0.15)
    assert run.source == "cc-style" and run.dialect == "openai"
    assert run.valid and run.protected_fits and run.target_met
    assert run.tokens_after <= run.target and 0.5 < run.budget_used <= 1.0
    kept = sum(k for k, _ in run.kept.values())
    total = sum(t for _, t in run.kept.values())
    assert total == sum(f.required for f in session.facts)
    assert kept < total  # truncation loses planted facts
    whole = measure(session, "truncate", 1.0)
    assert whole.last_verbatim and whole.empty_summaries == 0 and whole.stale == ()
    assert all(k == t for k, t in whole.kept.values())


def test_a_growing_session_is_compacted_about_five_times_and_scored_at_the_end() -> None:
    run = measure_growing(family_session(), "mask+truncate", 0.15)
    assert 3 <= run.compactions <= 7
    assert run.valid and run.tokens_after <= run.target
    assert run.last_verbatim


def run_with(pipeline: str, kept: dict[str, tuple[int, int]]) -> RunMeasure:
    return RunMeasure(
        source="cc", dialect="openai", session="s", pipeline=pipeline, ratio=0.15,
        tokens_before=100, target=15, tokens_after=14, status="compacted", valid=True,
        target_met=True, protected_fits=True, last_verbatim=True, empty_summaries=0, stale=(),
        kept=kept, optional={},  # type: ignore[arg-type]
    )  # fmt: skip


def test_shortfalls_name_each_category_where_the_default_keeps_fewer() -> None:
    pooled: dict[tuple[str, str, str, float], Pooled] = {}
    for pipeline, kept in (
        ("default", {"command": (3, 5), "constraint": (2, 2)}),
        ("mask+truncate", {"command": (4, 5), "constraint": (2, 2)}),
        ("truncate", {"command": (1, 5), "constraint": (1, 2)}),
    ):
        pooled.setdefault(("cc", "openai", pipeline, 0.15), Pooled()).add(run_with(pipeline, kept))
    assert shortfalls(pooled) == [
        "cc/openai at 15%: command default 3/5 < mask+truncate 4/5",
    ]
    assert pooled[("cc", "openai", "default", 0.15)].critical.total == 2


def test_sources_are_the_agent_families_of_the_real_data() -> None:
    names = {
        "cc_rel_coverage_fix.json": "cc",
        "ccx_brain_06ea6fa4.json": "ccx",
        "p2r_tripforge_bugfix1.json": "p2r",
        "p2r_harborsuite_develop1.json": "opencode",
        "cline_mra.json": "cline",
        "aider_luvatrix.json": "aider",
        "mini_local.json": "mini",
        "pwn__warmup.traj": "swe-agent",
    }
    assert {n: source_of(n) for n in names} == names


def test_shared_data_comes_from_the_environment_or_beside_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_SHARED_DATA", str(tmp_path))
    assert shared_data_dir(tmp_path / "nowhere" / "repo") == tmp_path
    monkeypatch.delenv("COMPACTION_SHARED_DATA")
    assert shared_data_dir(tmp_path / "repo") is None
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert shared_data_dir(tmp_path / "repo") == tmp_path / "shared" / "data"


def test_the_bench_skips_real_data_with_a_message_when_it_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_realdata

    monkeypatch.delenv("COMPACTION_SHARED_DATA", raising=False)
    monkeypatch.setattr(bench_realdata, "REPO", tmp_path / "repo")
    printed: list[str] = []
    assert bench_realdata.run(printed.append, only="realdata") == []
    assert any(line.startswith("skipped: no ../shared/data/realdata") for line in printed)
    sys.modules.pop("bench_realdata", None)


REALDATA = shared_data_dir(Path(__file__).resolve().parents[1])


@pytest.mark.skipif(
    REALDATA is None or not (REALDATA / "realdata").is_dir(),
    reason="../shared/data/realdata not present (set COMPACTION_SHARED_DATA)",
)
def test_compaction_eval_reads_a_real_session_with_the_state_probes(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from compaction.cli import cli

    assert REALDATA is not None
    source = REALDATA / "realdata" / "openai" / "cc_rel_coverage_fix.json"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / source.name).write_bytes(source.read_bytes())
    out = tmp_path / "report"
    result = CliRunner().invoke(
        cli,
        ["eval", "--dataset", str(tmp_path / "data"), "--strategies", "default,truncate",
         "--out", str(out)],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    [session] = results["sessions"]
    assert session["required_facts"] >= 5
    categories = set(results["strategies"][0]["by_category"])
    assert {"constraint", "test_status", "last_message", "file_modified"} <= categories


def test_compaction_eval_reports_last_message_empty_summaries_and_budget_per_run() -> None:
    from compaction.eval.runner import run_eval

    result = run_eval([family_session()], ["truncate"], target_ratio=0.15, successive_k=1)
    [run] = result.runs
    data = run.to_dict()
    assert data["last_message_verbatim"] is True
    assert data["empty_summaries"] == 0
    assert 0.5 < data["budget_used"] <= 1.0
    summary = result.summaries[0].to_dict()
    assert summary["last_message_verbatim"] == 1
    assert summary["budget_used_mean"] == round(run.budget_used, 4)
