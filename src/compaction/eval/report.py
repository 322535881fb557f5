"""The evaluation report: an `EvalResult` laid out as files in one directory.

    results.json                  every number (`EvalResult.to_dict()`)
    survival_by_category.png      facts kept per category, one bar per pipeline
    replay_tokens.png             input tokens of each model call in a replay, per pipeline
    survival_vs_compression.png   facts kept against compression, per session and pipeline
    report.html                   a self-contained page: the finding, the charts, the tables
    report.md                     the same finding, charts and summary table for GitHub
    REPRODUCE.txt                 the command that produced it

Charts are drawn with matplotlib (the `eval` extra) on the Agg backend; without matplotlib
the page is written without them and says so. The page references the PNGs by relative
path and loads nothing else, so it renders offline.

This module must never run a compaction or compute a metric: every number it shows comes
from the `EvalResult` it is given.
"""

from __future__ import annotations

import html
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction.eval.probes import CATEGORIES, DEPTHS, REQUIRED_CATEGORIES, FactCategory, Rate
from compaction.eval.qa import JUDGE_DIMENSIONS, Interval
from compaction.eval.runner import EvalResult, StrategySummary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CHARTS", "Report", "headline", "write_report"]

CHARTS = {
    "survival_by_category.png": "Facts kept by category",
    "replay_tokens.png": "Input tokens per model call, replayed",
    "survival_vs_compression.png": "Facts kept against compression",
}

# Colour-blind-safe (Okabe-Ito), in the order pipelines were given; the uncompacted baseline
# is always grey.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
BASELINE = "#8a8a8a"

CATEGORY_NAMES = {
    "constraint": "user constraints",
    "file_modified": "files modified",
    "file_created": "files created",
    "file_deleted": "files deleted",
    "file_read": "files read",
    "command": "commands",
    "error_open": "open errors",
    "error_resolved": "resolved errors",
    "decision": "decisions",
    "todo": "open to-dos",
    "changed_value": "changed values",
    "identifier": "identifiers",
    "test_status": "final test status",
    "last_message": "the last message",
}


@dataclass
class Report:
    """The files written, and notes about what could not be drawn."""

    directory: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def html(self) -> Path:
        return self.directory / "report.html"


def write_report(result: EvalResult, directory: str | Path) -> Report:
    """Write every report file into `directory` (created if needed) and return their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    report = Report(out)

    def write(name: str, text: str) -> None:
        path = out / name
        path.write_text(text, encoding="utf-8")
        report.files.append(path)

    write("results.json", json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    charts = _draw_charts(result, out, report)
    write("report.html", render_html(result, charts))
    write("report.md", render_markdown(result, charts))
    write("REPRODUCE.txt", (result.command or _library_note(result)) + "\n")
    return report


def _library_note(result: EvalResult) -> str:
    return "# run from the library (no command line); configuration:\n" + "\n".join(
        "# " + line for line in json.dumps(result.config.to_dict(), indent=2).splitlines()
    )


# --- numbers as text -------------------------------------------------------------------------


def pct(rate: Rate | float | None, digits: int = 1) -> str:
    """A rate as a percentage; "–" when there was nothing to count."""
    if rate is None:
        return "–"
    if isinstance(rate, Rate):
        if rate.total == 0:
            return "–"
        rate = rate.kept / rate.total
    if rate in (0.0, 1.0):
        return f"{100 * rate:.0f}%"
    return f"{100 * rate:.{digits}f}%"


def frac(rate: Rate) -> str:
    return f"{rate.kept}/{rate.total}" if rate.total else "–"


def ci_pct(interval: Interval | None) -> str:
    """An accuracy with its 95% confidence interval: "72.0% (65.1–78.9%)"."""
    if interval is None:
        return "–"
    return f"{pct(interval.mean)} ({pct(interval.low)}–{pct(interval.high)})"


def ci_score(interval: Interval | None) -> str:
    """A 0–5 judge score with its 95% confidence interval: "3.7 (3.2–4.1)"."""
    if interval is None:
        return "–"
    return f"{interval.mean:.1f} ({interval.low:.1f}–{interval.high:.1f})"


def _has_qa(result: EvalResult) -> bool:
    return any(s.has_qa for s in result.summaries)


def times(value: float) -> str:
    return f"{value:.1f}×"


def tokens(value: float) -> str:
    return f"{value:,.0f}"


def _pipelines_colors(result: EvalResult) -> dict[str, str]:
    return {s.pipeline.spec: PALETTE[i % len(PALETTE)] for i, s in enumerate(result.summaries)}


# --- the finding -----------------------------------------------------------------------------


def _rank(summary: StrategySummary) -> tuple[float, float, float]:
    """Facts kept, then critical facts kept, then compression: higher is better."""
    kept, critical = summary.survival, summary.critical
    return (
        kept.value if kept.total else -1.0,
        critical.value if critical.total else -1.0,
        summary.compression_median,
    )


def _name(result: EvalResult, summary: StrategySummary) -> str:
    label = summary.pipeline.label
    if summary.pipeline.uses_llm and result.config.summarizer.get("kind") == "stand-in":
        label += " with the stand-in summarizer"
    return label


def headline(result: EvalResult) -> list[str]:
    """The finding in a few sentences (plain text).

    The best pipeline is the one keeping the most facts (then the most critical facts, then
    compressing most) among those that met the target in the most sessions (every session,
    when any did); a pipeline that
    kept more by missing the target is named as such, and the pipeline keeping the fewest
    facts is the contrast. Then, when a model was asked the probes as questions, the
    pipelines whose compacted contexts it answered most and fewest from. Then the replay
    saving of the best.
    """
    summaries = list(result.summaries)
    ratio = result.config.target_ratio
    facts = summaries[0].survival.total
    most = max(s.target_met for s in summaries)
    met = [s for s in summaries if s.target_met == most]
    best = max(met, key=_rank)
    worst = min(summaries, key=_rank)
    lines = []
    if facts:
        first = (
            f"Compacted to {pct(ratio, 0)} of their tokens, {_name(result, best)} kept "
            f"{pct(best.survival)} of {facts} planted facts"
            f" ({pct(best.critical)} of the critical ones) at a median "
            f"{times(best.compression_median)} compression"
        )
        if _rank(worst) < _rank(best):
            first += (
                f"; {_name(result, worst)} kept {pct(worst.survival)}"
                f" at {times(worst.compression_median)}"
            )
        lines.append(first + ".")
        for s in summaries:
            if s not in met and _rank(s) > _rank(best):
                lines.append(
                    f"{_name(result, s)} kept {pct(s.survival)} but reached only "
                    f"{times(s.compression_median)}: the target of {times(1 / ratio)} was met "
                    f"in {s.target_met} of {s.sessions} sessions."
                )
    else:
        lines.append(
            f"Compacted to {pct(ratio, 0)} of their tokens, {_name(result, best)} reached a "
            f"median {times(best.compression_median)} compression (these sessions carry no "
            "facts to check)."
        )
    asked = [s for s in summaries if s.qa_accuracy is not None]
    if asked:
        top = max(asked, key=lambda s: _mean(s.qa_accuracy))
        low = min(asked, key=lambda s: _mean(s.qa_accuracy))
        qa = result.config.qa or {}
        model = qa.get("model") or qa.get("provider", "the model")
        line = (
            f"Asked every planted fact as a question against the compacted context ({model}, "
            f"{qa.get('replicates', '?')} replicates), the model answered "
            f"{ci_pct(top.qa_accuracy)} of them correctly (mean, 95% CI) from "
            f"{top.pipeline.spec}"
        )
        if _mean(low.qa_accuracy) < _mean(top.qa_accuracy):
            line += f" and {ci_pct(low.qa_accuracy)} from {low.pipeline.spec}"
        lines.append(line + ".")
    lines.append(
        f"Replayed call by call with a budget of {pct(ratio, 0)} of each session, "
        f"{best.pipeline.spec} sent {pct(best.replay_saving, 0)} fewer input tokens than no "
        f"compaction (peak {tokens(best.replay_peak_max)} tokens against "
        f"{tokens(max(r.replay.baseline_peak for r in best.runs))})."
    )
    return lines


def _mean(interval: Interval | None) -> float:
    return interval.mean if interval is not None else -1.0


def _dialect_of(result: EvalResult, session: str) -> str:
    for info in result.sessions:
        if info.name == session:
            return info.dialect
    return "openai"


def warnings(result: EvalResult) -> list[str]:
    """What went wrong anywhere: invalid transcripts, nondeterminism, stale values, missed
    targets."""
    found = []
    n = len(result.sessions)
    for s in result.summaries:
        label = s.pipeline.spec
        for dialect, valid in (("OpenAI", s.valid_openai), ("Anthropic", s.valid_anthropic)):
            if valid < n:
                key = dialect.lower()
                bad = [r for r in s.runs if r.validity.added(key)]
                rules = sorted(
                    {v.rsplit("[", 1)[-1].rstrip("]") for r in bad for v in r.validity.added(key)}
                )
                converted = any(_dialect_of(result, r.session) != key for r in bad)
                verb = "breaks" if n - valid == 1 else "break"
                found.append(
                    f"{label}: {n - valid} of {n} compacted sessions {verb} {dialect}'s rules"
                    + (" once converted to it" if converted else "")
                    + f" ({', '.join(rules)})"
                )
        if s.deterministic < n:
            found.append(f"{label}: two runs differed in {n - s.deterministic} of {n} sessions")
        if s.stale_as_current:
            found.append(f"{label}: {s.stale_as_current} superseded values shown as current")
        if s.target_met < n:
            found.append(f"{label}: missed the target in {n - s.target_met} of {n} sessions")
    return found


# --- charts ----------------------------------------------------------------------------------


def _draw_charts(result: EvalResult, out: Path, report: Report) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        report.notes.append(
            "charts skipped: matplotlib is not installed (pip install 'llm-compaction[eval]')"
        )
        return []
    drawn = []
    for name, draw in (
        ("survival_by_category.png", _chart_categories),
        ("replay_tokens.png", _chart_replay),
        ("survival_vs_compression.png", _chart_scatter),
    ):
        figure = Figure(figsize=(11, 4.6) if name == "survival_by_category.png" else (7, 4.6))
        if not draw(figure, result):
            continue
        path = out / name
        figure.savefig(path, dpi=110, metadata={"Software": None})
        report.files.append(path)
        drawn.append(name)
    return drawn


def _style(ax: Any) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=9)


def _categories(result: EvalResult) -> list[FactCategory]:
    present = {c for s in result.summaries for c, r in s.by_category.items() if r.total}
    return [c for c in CATEGORIES if c in present]


def _chart_categories(figure: Figure, result: EvalResult) -> bool:
    categories = _categories(result)
    if not categories:
        return False
    colors = _pipelines_colors(result)
    groups = ["all facts", *categories]
    ax = figure.add_subplot()
    count = len(result.summaries)
    width = 0.8 / count
    for i, summary in enumerate(result.summaries):
        rates = [summary.survival, *(summary.by_category.get(c, Rate(0, 0)) for c in categories)]
        xs = [g + (i - (count - 1) / 2) * width for g in range(len(groups))]
        ys = [100 * r.value if r.total else 0 for r in rates]
        spec = summary.pipeline.spec
        ax.bar(xs, ys, width * 0.92, color=colors[spec], label=spec)
    names = [
        "all facts",
        *(
            CATEGORY_NAMES.get(c, c) + (" *" if c in REQUIRED_CATEGORIES else "")
            for c in categories
        ),
    ]
    ax.set_xticks(range(len(groups)), names, rotation=30, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("facts kept (%)")
    figure.suptitle(
        f"Facts kept by category at {pct(result.config.target_ratio, 0)} of the tokens"
        "   (* required at 100%)",
        fontsize=12,
        x=0.06,
        y=0.98,
        ha="left",
    )
    _style(ax)
    ax.legend(
        ncols=min(count, 8), fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(0, 1.0)
    )
    figure.subplots_adjust(left=0.06, right=0.99, top=0.84, bottom=0.25)
    return True


def _chart_replay(figure: Figure, result: EvalResult) -> bool:
    first = result.sessions[0].name
    runs = [next(r for r in s.runs if r.session == first) for s in result.summaries]
    if not runs or not runs[0].replay.calls:
        return False
    colors = _pipelines_colors(result)
    ax = figure.add_subplot()
    baseline = [c.baseline_tokens for c in runs[0].replay.calls]
    xs = range(1, len(baseline) + 1)
    ax.plot(xs, baseline, color=BASELINE, linestyle="--", linewidth=1.6, label="no compaction")
    for run in runs:
        ax.plot(
            xs,
            [c.input_tokens for c in run.replay.calls],
            color=colors[run.strategy],
            linewidth=1.6,
            label=run.strategy,
        )
    threshold = runs[0].replay.threshold
    if threshold:
        ax.axhline(threshold, color="#444444", linewidth=0.8, linestyle=":")
        ax.annotate(
            f"budget {threshold:,}",
            (1, threshold),
            textcoords="offset points",
            xytext=(2, 4),
            fontsize=8,
            color="#444444",
        )
    ax.set_xlabel("model call")
    ax.set_ylabel("input tokens")
    ax.set_title(f"Input tokens per call, replaying {first}", fontsize=11, loc="left")
    ax.yaxis.set_major_formatter(_thousands())
    _style(ax)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    figure.subplots_adjust(left=0.12, right=0.98, top=0.9, bottom=0.12)
    return True


def _chart_scatter(figure: Figure, result: EvalResult) -> bool:
    if not any(s.survival.total for s in result.summaries):
        return False
    colors = _pipelines_colors(result)
    ax = figure.add_subplot()
    for summary in result.summaries:
        color = colors[summary.pipeline.spec]
        points = [(r.compression, 100 * r.survival.overall.value) for r in summary.runs]
        ax.scatter(
            [p[0] for p in points], [p[1] for p in points], s=18, color=color, alpha=0.35, lw=0
        )
        x, y = summary.compression_median, 100 * summary.survival.value
        ax.scatter(
            [x],
            [y],
            s=110,
            color=color,
            edgecolors="white",
            linewidths=1.2,
            zorder=3,
            label=f"{summary.pipeline.spec}  {pct(summary.survival)} · {times(x)}",
        )
    aim = 1 / result.config.target_ratio
    ax.axvline(aim, color="#444444", linewidth=0.8, linestyle=":")
    ax.annotate(
        f"target {times(aim)}",
        (aim, 2),
        textcoords="offset points",
        xytext=(3, 0),
        fontsize=8,
        color="#444444",
    )
    ax.set_ylim(0, 105)
    ax.set_xlim(left=0)
    ax.set_xlabel("compression (tokens before / after)")
    ax.set_ylabel("facts kept (%)")
    ax.set_title(
        "Facts kept against compression (dots: sessions; discs: pooled)", fontsize=11, loc="left"
    )
    _style(ax)
    ax.legend(fontsize=8, frameon=False, loc="lower left", scatterpoints=1)
    figure.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.12)
    return True


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: f"{value:,.0f}")


# --- HTML ------------------------------------------------------------------------------------

CSS = """
:root { --ink: #1d2330; --muted: #5d6577; --line: #e3e6ec; --soft: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 32px 28px 64px; }
header .kicker { color: var(--muted); font-size: 13px; letter-spacing: .04em;
  text-transform: uppercase; }
h1 { font-size: 28px; margin: 4px 0 6px; }
h2 { font-size: 19px; margin: 40px 0 10px; padding-top: 8px; border-top: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 20px; }
.finding { background: #eef5fb; border-left: 5px solid #0072B2; padding: 16px 20px;
  border-radius: 6px; font-size: 18px; line-height: 1.45; }
.finding p { margin: 0 0 6px; }
.finding p + p { font-size: 15px; color: #334; }
.warn { background: #fff6e5; border-left: 5px solid #E69F00; padding: 10px 16px;
  border-radius: 6px; margin-top: 12px; font-size: 14px; }
.warn ul { margin: 4px 0 0; padding-left: 18px; }
.note { background: var(--soft); border-left: 5px solid #999; padding: 10px 16px;
  border-radius: 6px; margin-top: 12px; font-size: 14px; color: #333; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr));
  gap: 12px; margin: 22px 0 8px; }
.card { border: 1px solid var(--line); border-top: 5px solid var(--c); border-radius: 8px;
  padding: 12px 14px; }
.card .name { font-weight: 600; font-size: 14px; }
.card .chain { color: var(--muted); font-size: 12px; min-height: 18px; }
.card .big { font-size: 30px; font-weight: 700; margin: 4px 0 0; }
.card .small { color: var(--muted); font-size: 13px; }
figure { margin: 18px 0; }
figure img { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; margin: 8px 0; }
th, td { padding: 6px 9px; border-bottom: 1px solid var(--line); text-align: right;
  white-space: nowrap; }
th { background: var(--soft); font-weight: 600; white-space: normal; vertical-align: bottom; }
.scroll { overflow-x: auto; }
th:first-child, td:first-child { text-align: left; }
td.l { text-align: left; white-space: normal; }
th.t, td.t { text-align: left; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 6px; background: var(--c); }
.bad { color: #b3261e; font-weight: 600; }
code, pre { font-family: "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: #161b22; color: #e6edf3; padding: 14px 16px; border-radius: 6px;
  overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; font-size: 14px; }
dt { font-weight: 600; } dd { margin: 0; color: #333; }
@media (max-width: 820px) { .pair { grid-template-columns: 1fr; } }
"""

DEFINITIONS = (
    ("facts kept", "required planted facts whose every probe string is in the compacted text"),
    ("critical", "the required facts whose loss breaks the work"),
    ("compression", "tokens before ÷ tokens after (median over sessions)"),
    ("target met", "sessions compacted to at most the target"),
    ("stale", "a superseded value or decision present while the current one is not"),
    (
        "mutated",
        "a changed value's key present with neither its latest nor a superseded value",
    ),
    (
        "valid",
        "sessions whose compaction adds no violation of OpenAI's / Anthropic's rules to "
        "those the input already had",
    ),
    ("deterministic", "sessions where two compactions encode to the same bytes"),
    (
        "replay",
        "each assistant message is a model call whose input is everything before it; the "
        "compactor runs before every call with a token threshold of target × the session's "
        "tokens; saving = 1 − Σ input tokens ÷ Σ input tokens without compaction",
    ),
    (
        "after k",
        "the session cut into k parts at call points; each part appended to the compacted "
        "context of the previous round and compacted again to the same target",
    ),
)


QA_DEFINITIONS = (
    (
        "questions answered",
        "the model was asked each planted fact's question against the first compacted "
        "context; an answer is right when it contains every probe string the question does "
        "not give away. Mean and 95% t-interval over every session's replicates, pooled",
    ),
    (
        "judge",
        "a judge model's 0–5 scores on Factory's six dimensions, pooled over sessions and "
        "replicates like the answers",
    ),
)


def _e(value: object) -> str:
    return html.escape(str(value))


def _cell(rate: Rate, *, required: bool = False) -> str:
    if not rate.total:
        return "<td>–</td>"
    value = rate.kept / rate.total
    # A heat tint: the eye finds the weak cells before reading a number.
    alpha = 0.08 + 0.5 * (1 - value)
    shade = f"rgba(213,94,0,{alpha:.2f})" if value < 1 else "rgba(0,158,115,0.12)"
    bad = ' class="bad"' if required and value < 1 else ""
    return (
        f'<td style="background:{shade}"><span{bad}>{pct(rate)}</span> '
        f'<small style="color:#667">{frac(rate)}</small></td>'
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> str:
    """A table; the first `left` columns hold text and are aligned left, the rest numbers."""
    cells = "".join(
        f"<th class='t'>{_e(h)}</th>" if i < left else f"<th>{_e(h)}</th>"
        for i, h in enumerate(head)
    )
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    table = f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"
    return f"<div class='scroll'>{table}</div>"


def _name_cell(summary: StrategySummary, colors: dict[str, str]) -> str:
    color = colors[summary.pipeline.spec]
    return (
        f'<td style="--c:{color}"><span class="swatch"></span>'
        f"<b>{_e(summary.pipeline.spec)}</b></td>"
    )


def render_html(result: EvalResult, charts: Sequence[str]) -> str:
    """The report page. `charts` names the PNG files that were drawn."""
    colors = _pipelines_colors(result)
    n = len(result.sessions)
    config = result.config
    sizes = [s.tokens for s in result.sessions]
    facts = sum(s.required_facts for s in result.sessions)
    parts: list[str] = []
    add = parts.append
    add("<!doctype html><html lang='en'><head><meta charset='utf-8'>")
    add("<meta name='viewport' content='width=device-width, initial-scale=1'>")
    add(f"<title>compaction eval — {_e(config.dataset)}</title><style>{CSS}</style></head>")
    add("<body><main><header>")
    add("<div class='kicker'>compaction eval · retention and cost</div>")
    add(
        f"<h1>What survives compaction to {pct(config.target_ratio, 0)} of the tokens</h1>"
        f"<p class='sub'>{n} session{'s' if n != 1 else ''} from {_e(config.dataset)} "
        f"(median {tokens(statistics.median(sizes))} tokens), {facts} facts to keep, "
        f"{len(result.summaries)} pipelines.</p></header>"
    )
    add("<section class='finding'>")
    for line in headline(result):
        add(f"<p>{_e(line)}</p>")
    add("</section>")
    problems = warnings(result)
    if problems:
        items = "".join(f"<li>{_e(p)}</li>" for p in problems)
        add(f"<div class='warn'><b>Watch out</b><ul>{items}</ul></div>")
    summarizer = config.summarizer
    if summarizer.get("used"):
        add(
            "<div class='note'><b>Summarizer:</b> "
            + _e(summarizer.get("description", summarizer.get("name")))
            + ".</div>"
        )

    add("<div class='cards'>")
    for s in result.summaries:
        chain = " → ".join(s.pipeline.kinds) if len(s.pipeline.kinds) > 1 else ""
        add(
            f"<div class='card' style='--c:{colors[s.pipeline.spec]}'>"
            f"<div class='name'>{_e(s.pipeline.spec)}</div>"
            f"<div class='chain'>{_e(chain)}</div>"
            f"<div class='big'>{pct(s.survival)}</div>"
            f"<div class='small'>facts kept<br>{times(s.compression_median)} smaller · "
            f"replay −{pct(s.replay_saving, 0)}</div></div>"
        )
    add("</div>")

    if not charts:
        add(
            "<div class='note'>No charts: matplotlib is not installed "
            "(<code>pip install 'llm-compaction[eval]'</code>).</div>"
        )
    else:
        add("<h2>Charts</h2>")
        if "survival_by_category.png" in charts:
            add(
                "<figure><img src='survival_by_category.png' alt='facts kept by category'>"
                "<figcaption>Share of planted facts still present after one compaction, by "
                "category; * marks the categories that must survive at 100%.</figcaption>"
                "</figure>"
            )
        pair = [c for c in ("survival_vs_compression.png", "replay_tokens.png") if c in charts]
        captions = {
            "survival_vs_compression.png": "Each small dot is one session; each disc pools "
            "all sessions of a pipeline. The dotted line is the target compression.",
            "replay_tokens.png": "The first session replayed call by call: what each call "
            "would send with the pipeline in front of it, against no compaction.",
        }
        if pair:
            add("<div class='pair'>")
            for chart in pair:
                add(
                    f"<figure><img src='{chart}' alt='{_e(CHARTS[chart])}'>"
                    f"<figcaption>{_e(captions[chart])}</figcaption></figure>"
                )
            add("</div>")

    add("<h2>Summary</h2>")
    head = [
        "pipeline",
        "facts kept",
        "critical",
        "compression",
        "target met",
        "stale",
        "mutated",
        "valid OpenAI / Anthropic",
        "deterministic",
        "ms (median)",
        "summarizer calls",
    ]
    asked = _has_qa(result)
    if asked:
        head.insert(3, "Questions answered (95% CI)")
    rows = []
    for s in result.summaries:
        valid_bad = s.valid_openai < n or s.valid_anthropic < n
        qa_cells = [f"<td>{_e(ci_pct(s.qa_accuracy))}</td>"] if asked else []
        rows.append(
            [
                _name_cell(s, colors),
                _cell(s.survival),
                _cell(s.critical, required=True),
                *qa_cells,
                f"<td>{times(s.compression_median)}</td>",
                f"<td>{s.target_met}/{n}</td>",
                f"<td{' class=bad' if s.stale_as_current else ''}>{s.stale_as_current}</td>",
                f"<td{' class=bad' if s.mutated else ''}>{s.mutated}</td>",
                f"<td{' class=bad' if valid_bad else ''}>"
                f"{s.valid_openai}/{n} · {s.valid_anthropic}/{n}</td>",
                f"<td{' class=bad' if s.deterministic < n else ''}>{s.deterministic}/{n}</td>",
                f"<td>{s.median_compaction_ms:.1f}</td>",
                f"<td>{s.summarizer.calls}</td>",
            ]
        )
    add(_table(head, rows))

    if any(s.has_judge for s in result.summaries):
        judge_model = (config.qa or {}).get("judge_model")
        add("<h2>Judge: Factory's six dimensions</h2>")
        add(
            "<p class='sub'>Scores 0 (lost) – 5 (fully preserved) from the judge model"
            + (f" {_e(judge_model)}" if judge_model else "")
            + ", mean and 95% CI over every session's replicates.</p>"
        )
        head = ["dimension", *(s.pipeline.spec for s in result.summaries)]
        rows = [
            [
                f"<td>{_e(d.replace('_', ' '))}</td>",
                *(f"<td>{_e(ci_score(s.judge_dimensions.get(d)))}</td>" for s in result.summaries),
            ]
            for d in JUDGE_DIMENSIONS
        ]
        rows.append(
            [
                "<td><b>mean of the six</b></td>",
                *(f"<td><b>{_e(ci_score(s.judge_overall))}</b></td>" for s in result.summaries),
            ]
        )
        add(_table(head, rows))

    add("<h2>Cost over a whole session, and repeated compaction</h2>")
    head = [
        "pipeline",
        "replay peak",
        "Σ input tokens",
        "no compaction",
        "saving",
        "compactions",
        "summarizer calls (replay)",
        f"kept after k={config.successive_k}",
        "kept once",
    ]
    rows = []
    for s in result.summaries:
        rows.append(
            [
                _name_cell(s, colors),
                f"<td>{tokens(s.replay_peak_max)}</td>",
                f"<td>{tokens(s.replay_cumulative)}</td>",
                f"<td>{tokens(s.replay_baseline_cumulative)}</td>",
                f"<td><b>{pct(s.replay_saving)}</b></td>",
                f"<td>{sum(r.replay.compactions for r in s.runs)}</td>",
                f"<td>{s.replay_summarizer.calls}</td>",
                _cell(s.successive),
                _cell(s.survival),
            ]
        )
    add(_table(head, rows))

    categories = _categories(result)
    if categories:
        add("<h2>By category</h2>")
        head = ["category", *(s.pipeline.spec for s in result.summaries)]
        rows = []
        for c in categories:
            required = c in REQUIRED_CATEGORIES
            name = CATEGORY_NAMES.get(c, c) + (" *" if required else "")
            rows.append(
                [
                    f"<td>{_e(name)}</td>",
                    *(
                        _cell(s.by_category.get(c, Rate(0, 0)), required=required)
                        for s in result.summaries
                    ),
                ]
            )
        add(_table(head, rows))
        add("<p class='sub'>* required: losing any of these breaks the work.</p>")
        add("<h2>By depth in the session</h2>")
        head = ["planted", *(s.pipeline.spec for s in result.summaries)]
        rows = [
            [
                f"<td>{_e(d)}</td>",
                *(_cell(s.by_depth.get(d, Rate(0, 0))) for s in result.summaries),
            ]
            for d in DEPTHS
            if any(s.by_depth.get(d) for s in result.summaries)
        ]
        add(_table(head, rows))

    lost_rows = _lost_examples(result, per_strategy=4)
    if lost_rows:
        add("<h2>What was lost — examples</h2>")
        head = ["pipeline", "session", "category", "depth", "fact", "missing"]
        add(_table(head, lost_rows, left=6))

    if any(r.replicates and len(r.replicates) > 1 for r in result.runs):
        add("<h2>Replicates</h2>")
        head = ["pipeline", "facts kept per replicate", "mean", "95% CI"]
        rows = []
        for s in result.summaries:
            data = s.to_dict()["replicates"]
            ci = data["ci95"]
            rows.append(
                [
                    _name_cell(s, colors),
                    f"<td>{_e(', '.join(pct(v) for v in data['survival']))}</td>",
                    f"<td>{pct(data['mean'])}</td>",
                    f"<td>{'±' + pct(ci) if ci is not None else '–'}</td>",
                ]
            )
        add(_table(head, rows))

    add("<h2>Sessions</h2>")
    head = ["session", "source", "messages", "tokens", "facts (required)"]
    rows = [
        [
            f"<td>{_e(s.name)}</td>",
            f"<td class='t'>{_e(s.source)}</td>",
            f"<td>{s.messages}</td>",
            f"<td>{tokens(s.tokens)}</td>",
            f"<td>{s.facts} ({s.required_facts})</td>",
        ]
        for s in result.sessions
    ]
    add(_table(head, rows, left=2))

    add("<h2>How to read this</h2><dl>")
    for term, text in DEFINITIONS + (QA_DEFINITIONS if _has_qa(result) else ()):
        add(f"<dt>{_e(term)}</dt><dd>{_e(text)}</dd>")
    add(f"<dt>tokenizer</dt><dd>{_e(config.tokenizer)}")
    if config.tokenizer_note:
        add(f" — {_e(config.tokenizer_note)}")
    add("</dd></dl>")

    add("<h2>Reproduce</h2>")
    add(f"<pre>{_e(result.command or _library_note(result))}</pre>")
    add(
        "<p class='sub'>Every number above is in <code>results.json</code> beside this page. "
        "Times vary from run to run; everything else is the same on every run.</p>"
    )
    add("</main></body></html>\n")
    return "\n".join(parts)


def _lost_examples(result: EvalResult, *, per_strategy: int) -> list[list[str]]:
    rows = []
    colors = _pipelines_colors(result)
    for s in result.summaries:
        # Required categories first: those are the losses that matter most.
        ordered = sorted(
            ((run, fact) for run in s.runs for fact in run.survival.lost),
            key=lambda pair: (pair[1].category not in REQUIRED_CATEGORIES, not pair[1].critical),
        )
        for run, fact in ordered[:per_strategy]:
            missing = next(r.missing for r in run.survival.score.results if r.fact is fact)
            text = fact.text if len(fact.text) <= 140 else fact.text[:139] + "…"
            rows.append(
                [
                    _name_cell(s, colors),
                    f"<td class='t'>{_e(run.session)}</td>",
                    f"<td class='t'>{_e(CATEGORY_NAMES.get(fact.category, fact.category))}</td>",
                    f"<td class='t'>{_e(fact.depth)}</td>",
                    f"<td class='l'>{_e(text)}</td>",
                    f"<td class='l'><code>{_e(', '.join(missing))}</code></td>",
                ]
            )
    return rows


# --- Markdown (for reading on GitHub) --------------------------------------------------------


def render_markdown(result: EvalResult, charts: Sequence[str]) -> str:
    """The finding, the charts and the summary table, for a repository page."""
    n = len(result.sessions)
    lines = [
        f"# compaction eval — {result.config.dataset}",
        "",
    ]
    for i, line in enumerate(headline(result)):
        lines += [f"**{line}**" if i == 0 else line, ""]
    problems = warnings(result)
    if problems:
        lines += ["Watch out:", "", *(f"- {p}" for p in problems), ""]
    if result.config.summarizer.get("used"):
        lines += [f"Summarizer: {result.config.summarizer.get('description')}.", ""]
    lines += [f"![{CHARTS[c]}]({c})" for c in charts]
    asked = _has_qa(result)
    lines += [
        "",
        "| pipeline | facts kept | critical "
        + ("| questions answered (95% CI) " if asked else "")
        + "| compression | target met | stale | mutated "
        "| valid OpenAI · Anthropic | deterministic | replay saving "
        f"| kept after k={result.config.successive_k} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if asked else ""),
    ]
    for s in result.summaries:
        qa_cell = f"| {ci_pct(s.qa_accuracy)} " if asked else ""
        lines.append(
            f"| {s.pipeline.label} | {pct(s.survival)} ({frac(s.survival)}) "
            f"| {pct(s.critical)} {qa_cell}| {times(s.compression_median)} | {s.target_met}/{n} "
            f"| {s.stale_as_current} | {s.mutated} | {s.valid_openai}/{n} · "
            f"{s.valid_anthropic}/{n} | {s.deterministic}/{n} | {pct(s.replay_saving)} "
            f"| {pct(s.successive)} |"
        )
    lines += [
        "",
        "The full report with per-category tables and lost-fact examples is `report.html`; "
        "every number is in `results.json`.",
        "",
        "Reproduce:",
        "",
        "```sh",
        result.command or _library_note(result),
        "```",
        "",
    ]
    return "\n".join(lines)
