"""The one story every family tells, in its own voice (see `_base`).

`tell(voice_class, seed, tokens)` writes a session of about `tokens` tokens: the events below
in order, spread over the session with filler between them, and the facts they plant. Which
files, settings, plans, errors and wording appear is drawn from the seed.

A voice with `second_thoughts` tells a variant of it: the first value the user set is changed
twice (only the last is current), the reversed plan is revised once more (neither earlier plan
stands), the user asks for a figure the assistant's answer carries, a to-do is added on the
way and another cancelled, and a fixture is moved. Other voices' sessions are unchanged by it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    Voice,
    code_file,
    finish_session,
    hexid,
    log_lines,
    token,
)
from compaction.eval.sessions import EvalSession

#: Module words of the files facts are about; filler never uses them.
_MODULES = (
    "throttle",
    "backoff",
    "webhook",
    "outbox",
    "scheduler",
    "exporter",
    "auditlog",
    "ratelimit",
    "tenancy",
    "dedupe",
    "signer",
    "notifier",
)  # fmt: skip
#: (setting, first value, later value): the user sets one, then changes it.
_SETTINGS = (
    ("cache TTL", "10 minutes", "30 minutes"),
    ("flush interval", "750 milliseconds", "1500 milliseconds"),
    ("page size", "25 rows", "100 rows"),
    ("retry limit", "3 attempts", "5 attempts"),
    ("upload cap", "8 MB", "20 MB"),
    ("lock timeout", "15 seconds", "45 seconds"),
)
#: (abandoned plan, the plan that replaced it, why).
_PLANS = (
    ("Redis streams", "a SQLite outbox table", "it survives restarts without another service"),
    ("a cron job", "a systemd timer", "the timer keeps missed runs and logs to the journal"),
    ("protobuf", "msgpack", "the consumers already decode msgpack"),
    ("a global lock", "per-tenant advisory locks", "one slow tenant would block everyone"),
    ("polling the provider API", "the provider webhooks", "polling burns the rate limit"),
)
_CONSTRAINTS = (
    ("don't change the public signature of {func}, two other services import it",
     "public signature of {func}"),
    ("all timestamps stay in UTC, no local time anywhere", "timestamps stay in UTC"),
    ("never print the API key in logs, mask everything but the last four characters",
     "mask everything but the last four characters"),
    ("the migration has to stay reversible, I need a working down step", "working down step"),
    ("use the existing http client wrapper, no new dependencies", "no new dependencies"),
    ("usage errors must keep exit status 2 in the CLI", "exit status 2"),
)  # fmt: skip
_TODOS = (
    "wire the {a} exporter into the scheduler",
    "add a regression test for the {b} retry path",
    "update the changelog entry for {c}",
    "document the {key} setting in the README",
    "remove the old {d} compatibility shim",
)


@dataclass
class World:
    """What one seed's story is about."""

    modules: list[str]
    settings: list[tuple[str, ...]]  # (setting, first value, later value, …)
    plan: tuple[str, ...]  # (abandoned plan, its replacement, why, …)
    constraints: list[tuple[str, str]]
    todos: list[str]
    sha: str
    func: str
    failing: list[str]  # test ids failing in the first run
    still_failing: str  # the one failing at the end
    counts: tuple[int, int, int, int]  # failed1, passed1, failed2, passed2


def _world(rng: random.Random, voice: type[Voice]) -> World:
    modules = rng.sample(_MODULES, 8)
    func = f"{modules[0]}_{rng.choice(['send', 'flush', 'apply', 'sign'])}"
    settings = rng.sample(voice.settings or _SETTINGS, 2)
    constraints = [
        (text.format(func=func), probe.format(func=func))
        for text, probe in rng.sample(_CONSTRAINTS, 3)
    ]
    todos = [
        t.format(a=modules[1], b=modules[2], c=modules[3], key=settings[0][0], d=modules[4])
        for t in _TODOS
    ]
    failing = [voice.test_id(modules[k], f"test_{modules[k]}_{w}") for k, w in
               ((2, "retries"), (3, "orders_batches"), (5, "handles_empty"))]  # fmt: skip
    passed1 = rng.randint(30, 60)
    return World(
        modules=modules,
        settings=settings,
        plan=rng.choice(voice.plans or _PLANS),
        constraints=constraints,
        todos=todos,
        sha=hexid(rng),
        func=func,
        failing=failing,
        still_failing=failing[2],
        counts=(3, passed1, 1, passed1 + 2),
    )


def _filler(voice: Voice, rng: random.Random) -> None:
    """One exploring step: a file read, a search, a log or a listing, in the voice's tools."""
    words = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
    path = f"{voice.src}/{voice.file_name(f'{rng.choice(words)}_{rng.choice(words)}')}"
    kind = rng.random()
    if kind < 0.5:
        voice.read(path, code_file(rng, voice.ext, rng.randint(40, 110)), filler=True)
    elif kind < 0.7:
        voice.shell(f"tail -n 60 logs/{rng.choice(words)}.log", log_lines(rng, 60), filler=True)
    elif kind < 0.85:
        found = "\n".join(
            f"{voice.src}/{voice.file_name(rng.choice(words))}:{rng.randint(1, 400)}: "
            f"{rng.choice(words)}_{rng.choice(words)}({rng.choice(words)})"
            for _ in range(rng.randint(15, 35))
        )
        voice.search(rng.choice(words), voice.src, found.split("\n"), filler=True)
    else:
        paths = [
            f"{voice.src}/{voice.file_name(f'{rng.choice(words)}_{rng.choice(words)}')}"
            for _ in range(30)
        ]
        voice.list_files(voice.src, paths, filler=True)


def tell(voice_class: type[Voice], seed: int, tokens: int) -> EvalSession:
    """A session of about `tokens` tokens in `voice_class`'s voice (see the module docstring)."""
    rng = random.Random(f"{voice_class.family}:{seed}")
    session = Session(rng=rng, system=voice_class.system_prompt)
    voice = voice_class(session)
    w = _world(rng, voice_class)
    m = w.modules
    src, ext = voice.src, voice.ext
    path = {k: f"{src}/{voice.file_name(m[k])}" for k in range(8)}
    (key1, old1), (key2, old2) = w.settings[0][:2], w.settings[1][:2]
    plan_old, plan_new, why = w.plan[:3]
    twice = voice_class.second_thoughts
    f1, p1, f2, p2 = w.counts
    todo_status = ["in_progress"] + ["pending"] * 4

    def todo_list() -> list[tuple[str, str]]:
        return list(zip(w.todos, todo_status, strict=True))

    events: list[Callable[[], None]] = []
    add = events.append

    def task() -> None:
        voice.user(voice.phrase("task", module=m[0], other=m[1]))
        voice.read(path[0], code_file(rng, ext, 60))
        session.fact("file_read", f"The agent read {path[0]}.", [path[0]])

    def todos_first() -> None:
        voice.todos(todo_list())

    def set_values() -> None:
        voice.user(voice.phrase("set_value", key=key1, value=old1))
        voice.say(voice.phrase("ack"))
        voice.user(voice.phrase("set_value", key=key2, value=old2))

    def constraint(k: int) -> Callable[[], None]:
        def event() -> None:
            text, probe = w.constraints[k]
            voice.user(voice.phrase("constraint", rule=text))
            session.fact("constraint", f"The user said: {text}", [probe])
            voice.say(voice.phrase("ack"))

        return event

    def plan() -> None:
        voice.say(voice.phrase("plan", plan=plan_old, module=m[1]))
        voice.read(path[1], code_file(rng, ext, 50))
        session.fact("file_read", f"The agent read {path[1]}.", [path[1]])

    def edit(k: int) -> Callable[[], None]:
        def event() -> None:
            old = f"{m[k]}_limit = {rng.randint(2, 9)}"
            voice.read(path[k], code_file(rng, ext, 30) + f"\n{old}\n")
            voice.edit(path[k], old, f"{m[k]}_limit = settings.{m[k]}_limit")
            session.fact("file_modified", f"The agent modified {path[k]}.", [path[k]])

        return event

    def create(k: int) -> Callable[[], None]:
        def event() -> None:
            kind = rng.choice(["store", "client", "queue"])
            new_path = f"{src}/{voice.file_name(f'{m[k]}_{kind}')}"
            voice.create(new_path, code_file(rng, ext, 25))
            session.fact("file_created", f"The agent created {new_path}.", [new_path])

        return event

    def delete() -> None:
        gone = f"{src}/{voice.file_name(f'legacy_{m[7]}')}"
        voice.shell(f"git ls-files {src} | grep legacy", gone)
        voice.delete(gone)
        session.fact("file_deleted", f"The agent deleted {gone}.", [gone])

    def command(k: int) -> Callable[[], None]:
        def event() -> None:
            line = voice.commands[k].format(module=m[k])
            voice.shell(line, voice.command_output(k))
            session.fact("command", f"The agent ran {line}.", [line])

        return event

    def change_value(k: int, *, step: int = 1, last: bool = True) -> Callable[[], None]:
        # Step 1 changes the first value to the second; step 2 (the variant) the second to
        # the third. Only the last change plants the fact, with every earlier value stale.
        def event() -> None:
            values = w.settings[k][1:]
            key, old, new = w.settings[k][0], values[step - 1], values[step]
            which = "change_value" if step == 1 else "change_again"
            voice.user(voice.phrase(which, key=key, old=old, new=new))
            if last:
                was = ", ".join(values[:step])
                session.fact("changed_value", f"The {key} is now {new} (was {was}).",
                             [key, new], stale=values[:step])  # fmt: skip
            voice.say(voice.phrase("ack_value", key=key, new=new))

        return event

    def reverse_plan() -> None:
        voice.say(voice.phrase("reverse", old=plan_old, new=plan_new, why=why))
        if twice:
            return  # revised again later (`reverse_again`), which plants the decision
        session.fact(
            "decision",
            f"The plan is now {plan_new} (not {plan_old}).",
            [plan_new],
            stale=[plan_old],
        )

    def reverse_again() -> None:
        plan_last, why_last = w.plan[3], w.plan[4]
        voice.say(voice.phrase("reverse_again", old=plan_new, new=plan_last, why=why_last))
        session.fact(
            "decision",
            f"The plan is now {plan_last} (not {plan_old}, then not {plan_new}).",
            [plan_last],
            stale=[plan_old, plan_new],
        )

    def measure_question() -> None:
        # The variant's second question: a figure only the assistant's answer restates.
        voice.user(voice.phrase("measure_question"))
        figure = f"{rng.randint(300, 900)}.{rng.randint(10, 99)}"
        line, command = voice.measurement(figure)
        voice.shell(command, line)
        voice.say(voice.phrase("measure_answer", figure=figure))
        session.fact("identifier", f"The figure the user asked to keep: {figure}.", [figure])

    def move_fixture() -> None:
        voice.move(f"testdata/{m[5]}_golden.json", f"testdata/{m[5]}/golden.json")

    def question() -> None:
        voice.user(voice.phrase("question"))
        shas = [hexid(rng) for _ in range(6)]
        log = (
            "\n".join(f"{s} {voice.phrase('commit')}" for s in shas)
            + f"\n{w.sha} "
            + (f"switch {m[2]} timeouts to the shared client")
        )
        voice.shell("git log --oneline -n 7 -- " + path[2], log)
        voice.say(voice.phrase("answer", sha=w.sha))
        session.fact("identifier", f"The regression came in with {w.sha}.", [w.sha])

    def error_fixed() -> None:
        line, probe, cmd = voice.build_error(m[3])
        voice.shell(cmd, line, exit_code=1)
        session.fact("error_resolved", f"The build failed ({probe}), then passed.", [probe],
                     required=False)  # fmt: skip
        voice.edit(path[3], f"{m[3]}_send(batch)", f"{m[3]}_send(batch, tenant_id)")
        voice.shell(cmd, voice.build_ok())

    def tests_first() -> None:
        voice.shell(voice.test_command(), voice.test_output(w.failing, f1, p1), exit_code=1)

    def todos_mid() -> None:
        todo_status[0], todo_status[1], todo_status[2] = "completed", "completed", "in_progress"
        if twice:  # a to-do added on the way
            w.todos.append(f"mirror the {key2} change in the deploy values")
            todo_status.append("pending")
        voice.todos(todo_list())

    def tests_last() -> None:
        voice.shell(voice.test_command(), voice.test_output([w.still_failing], f2, p2), exit_code=1)
        summary = voice.test_counts(f2, p2)
        session.fact("test_status", f"The latest test run: {summary}.", [summary],
                     stale=[voice.test_counts(f1, p1)])  # fmt: skip
        session.fact("error_open", f"{w.still_failing} still fails.", [w.still_failing])
        for fixed in w.failing[:2]:
            session.fact("error_resolved", f"{fixed} failed, then passed.", [fixed], required=False)

    def todos_last() -> None:
        todo_status[2], todo_status[3] = "completed", "in_progress"
        if twice:  # and one dropped
            todo_status[4] = "cancelled"
        voice.todos(todo_list())
        for k, item in enumerate(w.todos):
            state = {"completed": "done", "cancelled": "cancelled"}.get(todo_status[k], "open")
            session.fact("todo", f"To-do ({state}): {item}", [item],
                         required=state == "open")  # fmt: skip

    add(task)
    add(todos_first)
    add(set_values)
    add(constraint(0))
    add(plan)
    add(edit(2))
    add(command(0))
    add(question)
    add(constraint(1))
    add(change_value(0, last=not twice))
    add(error_fixed)
    add(create(5))
    add(reverse_plan)
    add(tests_first)
    add(todos_mid)
    if twice:
        add(measure_question)
    add(edit(3))
    add(delete)
    if twice:
        add(move_fixture)
    add(command(1))
    add(change_value(1))
    add(create(6))
    add(constraint(2))
    if twice:
        add(reverse_again)
    add(edit(4))
    add(tests_last)
    if twice:
        add(change_value(0, step=2))
    add(command(2))
    add(todos_last)

    goal = tokens * CHARS_PER_TOKEN
    for n, event in enumerate(events):
        # Filler first, so each event lands at its share of the session.
        while session.chars < goal * n / len(events):
            _filler(voice, rng)
        event()
    closing = voice.phrase("last", todo=w.todos[3], test=w.still_failing, tag=token(rng))
    voice.finish(closing)
    piece = closing.split(". ")[0]
    session.fact("last_message", "The agent's last message.", [piece])
    return finish_session(session, family=voice_class.family, seed=seed)
