"""A letta-style family, telling the story's second-thoughts variant: a Perl 5 CPAN-style
distribution (ExtUtils::MakeMaker's `perl Makefile.PL && make`, `prove -lr t/` with TAP
output and Test::More's failure diagnostics, `perlcritic`, Benchmark's timethese/cmpthese
for the variant's figure) worked on by a Letta (formerly MemGPT) stateful agent, recorded as
OpenAI chat the way Letta sends its in-context messages to the model.

Based on letta-ai/letta at release 0.8.14 (July 2025; the last releases before the inner
thoughts kwarg was renamed `thinking`):

- `letta/schemas/message.py` `Message.to_openai_dict(put_inner_thoughts_in_kwargs=True)`: an
  assistant step is `content: null` and one tool call whose arguments hold the inner monologue
  first, as `inner_thoughts` (`add_inner_thoughts_to_tool_call`, arguments re-serialised by
  `json_dumps`, indent 2, non-ASCII kept), then the tool's own arguments, then Letta's
  `request_heartbeat` flag; tool messages carry the function's `name`.
- The assistant speaks to the user only through `send_message(message)` (function_sets/
  base.py), which returns None; every tool answer is `package_function_response`
  (`letta/system.py`): `{"status": "OK" | "Failed", "message": <str of the return>, "time":
  <get_local_time(), "%Y-%m-%d %I:%M:%S %p %Z%z">}`, a failing tool's message being
  `get_friendly_error_msg`'s "Error executing function <name>: <Exception>: <text>", and an
  answer over the tool's `return_char_limit` (6000) cut with FUNCTION_RETURN_VALUE_TRUNCATED's
  "... [NOTE: function output was truncated since it exceeded the character limit: N > 6000]".
- User messages are `package_user_message` JSON (`{"type": "user_message", "message", "time"}`);
  after a call with `request_heartbeat: true` Letta adds a user message `get_heartbeat(…,
  REQ_HEARTBEAT_MESSAGE)` (FUNC_FAILED_HEARTBEAT_MESSAGE after a failed call); a
  `send_message` with `request_heartbeat: false` ends the chain until the next event, an
  automated timer heartbeat waking the agent when it goes on working unprompted. The session
  opens on the `login` event (`get_login_event`, "Never (first login)") and the agent's
  greeting; when the context fills up the `system_alert` MESSAGE_SUMMARY_WARNING_STR appears and
  the agent saves its progress with `archival_memory_insert(content)`.
- Core memory is edited with the memgpt_v2 memory tools: `memory_insert(label, new_str,
  insert_line)` and `memory_replace(label, old_str, new_str)` (each answering "The core memory
  block with label `<label>` has been edited. Review the changes …"). The user's preferences
  (values, rules) go into the `human` block, one `- …` line each, changed values replaced in
  place; the plan lives in a `plan` block: an `Approach: …` line replaced when the plan
  changes, and the to-dos as checkbox lines (`- [ ]` pending, `- [>]` in progress, `- [x]`
  done, `- [-]` dropped), each status change a `memory_replace` of its line, a new to-do a
  `memory_insert`. Recall memory is searched with `conversation_search(query, page)`
  ("No results found." or "Showing N of N results (page 0/0): [...]").
- The system message is the memgpt_v2_chat base instructions (abridged) and the compiled core
  memory (`Memory.compile`'s default template: `<label>`, `<metadata>read_only=… chars_current
  =… chars_limit=…</metadata><value>…</value>`) and the `<memory_metadata>` block.

The coding tools are a Letta developer's own custom tools (Python functions registered with
`client.tools.upsert_from_function`), returning strings: `run_shell_command(command,
timeout)` "exit code N" and the combined output, `read_file(path)` the text, `write_file(path,
content)` "Wrote N bytes to <path>", `replace_in_file(path, old, new)` "Replaced 1 occurrence
in <path>" (raising ValueError when the text is not there exactly once), `search_code(pattern,
path)` `path:line:text` lines, `list_directory(path)` the paths. Files are deleted and moved
with `git rm` / `git mv` through the shell.

Outputs follow the real tools as perl 5.36 prints them (checked against a local perl):
MakeMaker's "Generating a Unix-style Makefile" / "Writing Makefile for …" and make's `cp lib/…
blib/lib/…`; a signature error "Too few arguments for subroutine 'Relaypost::Outbox::outbox_send'
(got 1; expected 2) at lib/Relaypost/Outbox.pm line N."; prove's `t/flush.t ..` lines with the
`#   Failed test '…'` / `#   at t/flush.t line N.` / `#          got: '2'` diagnostics,
"Dubious, test returned 3 (wstat 768, 0x300)", "Failed 3/24 subtests", the Test Summary Report
and `Files=…, Tests=…` / `Result: FAIL`; perlcritic's verbose-4 lines "(Severity: 3)";
Benchmark's timethese lines "@ 612.45/s (n=…)" and the cmpthese table.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, code_file

ROOT = "/home/dana/src/Relaypost"
DIST = "Relaypost"
VERSION = "0.41"
TEST = "prove -lr t/"
BUILD = "perl Makefile.PL && make && perl -Mblib script/relaypost-smoke"
BENCH = "perl -Mblib bench/flush.pl"
#: The one test file the story's tests live in (all go through the shared flush code).
TEST_FILE = "t/flush.t"
#: Test files that run beside it and pass, with how many tests each has.
OTHER_TESTS = ("t/00-load.t", "t/envelope.t", "t/signature.t", "t/routing.t")
NON_USER = "[This is an automated system message hidden from the user] "
REQ_HEARTBEAT = f"{NON_USER}Function called using request_heartbeat=true, returning control"
FAILED_HEARTBEAT = f"{NON_USER}Function call failed, returning control"
TIMER = "Automated timer"
MEMORY_WARNING = " ".join(
    [
        f"{NON_USER}The conversation history will soon reach its maximum length and be trimmed.",
        "Do NOT tell the user about this system alert, they should not know that the history "
        "is reaching max length.",
        "If there is any important new information or general memories about you or the user "
        "that you would like to save, you should save that information immediately by calling "
        "function core_memory_append, core_memory_replace, or archival_memory_insert.",
    ]
)
RETURN_CHAR_LIMIT = 6000
#: The story's to-do statuses as the plan block marks them.
MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
#: What each failing test checks (its Test::More name, `{m}` the module), got, expected, the
#: line of its check in t/flush.t and its number there.
EXAMPLES = {
    "retries": ("retries a timed-out {m} delivery three times", "2", "3", 31, 4),
    "orders_batches": ("keeps {m} batches in enqueue order", "c", "b", 58, 9),
    "handles_empty": ("sends nothing for an empty {m} queue", "1", "0", 84, 13),
}
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")
_BASE_INSTRUCTIONS = (
    "<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital "
    "companion, developed in 2025.\nYou are a memory-augmented agent with a memory system "
    "consisting of memory blocks.\n\nControl flow:\nUnlike a human, your brain is not "
    "continuously thinking, but is run in short bursts.\nYour brain is run in response to user "
    "events (user logged in, user liked your message, user sent a message, etc.), similar to "
    "older models.\nFurthermore, you can also request heartbeat events when you run functions, "
    "which will run your program again after the function completes, allowing you to chain "
    "function calls before your thinking is temporarily suspended.\n\nBasic functions:\nWhen "
    "you write a response, you express your inner monologue (private to you only) before "
    "taking any action, this is how you think.\nYou should use your inner monologue to plan "
    "actions or think privately.\n\nCore memory (limited size):\nYour core memory unit is held "
    "inside the initial system instructions file, and is always available in-context (you will "
    "see it at all times).\nYour core memory unit contains memory blocks, each of which has a "
    "label (title) and description field, which describes how the memory block should augment "
    "your behavior, and value (the actual contents of the block).\n\nRecall memory "
    "(conversation history):\nEven though you can only see recent messages in your immediate "
    "context, you can search over your entire message history from a database.\n\nBase "
    "instructions finished.\n</base_instructions>"
)
_BLOCKS = (
    ("persona", "I am the maintainers' coding agent for the Relaypost distribution. I work in "
     f"{ROOT} through my shell and file tools, keep the plan in my plan block and what Dana "
     "wants in the human block, and report back with send_message."),
    ("human", f"Dana, maintainer of {DIST} (a Perl 5 CPAN-style distribution, perl 5.36, "
     "ExtUtils::MakeMaker, Test::More, perlcritic)."),
    ("plan", ""),
)  # fmt: skip


def system_prompt() -> str:
    blocks = "\n".join(
        f'<{label}>\n<metadata>read_only="False" chars_current="{len(value)}" '
        f'chars_limit="5000"</metadata><value>{value}\n</value></{label}>\n'
        for label, value in _BLOCKS
    )
    metadata = "\n".join(
        [
            "<memory_metadata>",
            "- The current time is: November 24, 2026",
            "- Memory blocks were last modified: 2026-11-24 09:02:17 AM UTC+0000",
            "- 0 previous messages between you and the user are stored in recall memory "
            "(use tools to access them)",
            "- 0 total memories you created are stored in archival memory (use tools to "
            "access them)",
            "</memory_metadata>",
        ]
    )
    return f"{_BASE_INSTRUCTIONS}\n\n{blocks}\n\n{metadata}"


def json_dumps(data: Any) -> str:
    """Letta's `json_dumps`: indent 2, non-ASCII kept."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def package(name: str) -> str:
    """The Perl package of a story module (`outbox` → `Relaypost::Outbox`)."""
    return f"{DIST}::{camel(name)}"


def perl_line(line: str) -> str:
    """A story line as the Perl it stands for: a limit is a `my` variable, the send before the
    fix passes only the batch (the sub's signature wants the tenant too), the fix the batch's."""
    found = STORY_LINE.match(line)
    if not found:
        return line
    module = found.group(1)
    send = _SEND.match(line)
    if send:
        args = "$batch, $batch->{tenant_id}" if send.group(2) else "$batch"
        return f"    {module}_send({args});"
    value = found.group(3)
    if value.startswith("settings."):
        value = f"$settings->{{{value.removeprefix('settings.')}}}"
    return f"my ${module}_limit = {value};"


class LettaVoice(Voice):
    family = "letta-style"
    system_prompt = system_prompt()
    src = "lib/Relaypost"
    ext = "pm"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "perl -Mblib script/relaypost-replay --queue {module} --dry-run",
        "perlcritic --severity 3 --verbose 4 lib/",
        "make disttest",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("resend backoff ceiling", "11 seconds", "240 seconds", "75 seconds"),
        ("parked queue batch size", "35 envelopes", "800 envelopes", "120 envelopes"),
        ("parked envelope retention", "4 days", "60 days", "21 days"),
        ("worker pool size", "3 forks", "32 forks", "9 forks"),
        ("signature clock skew", "2 minutes", "150 minutes", "40 minutes"),
        ("HTTP::Tiny timeout", "6 seconds", "95 seconds", "28 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a package-level hash of parked envelopes kept in memory",
         "a Storable file under var/parked written after every flush",
         "the hash is empty again whenever the daemon restarts",
         "a DBD::SQLite outbox table drained by the resend loop",
         "two workers writing the Storable file at once corrupt it"),
        ("one flock on a lock file around the whole dispatcher",
         "a forked Parallel::ForkManager child per tenant",
         "one slow tenant keeps the lock while every other tenant waits",
         "a Minion job queue with one job per tenant",
         "each child reloads the whole distribution and opens its own database handle"),
        ("a crontab entry running script/relaypost-resend",
         "a systemd timer next to the PSGI service",
         "cron loses the runs that fell while the host was down",
         "a resend loop inside the PSGI app driven by an AnyEvent timer",
         "operations will not ship one more unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Relaypost never resends the webhook envelopes {module} parked while a partner "
            "endpoint was down. Please get them out again in the order they were parked. "
            "{other} uses the same flush code, so fix it there too.",
            "Once a partner is reachable again, the envelopes parked by {module} should be "
            "delivered, oldest first, but they just sit there. {other} shares the flush "
            "routine, fix both.",
        ],
        "set_value": [
            "Start with a {key} of {value}.",
            "For the {key}, go with {value} at first.",
        ],
        "ack": [
            "Got it, I have put that in my memory and will stick to it.",
            "Saved to memory. I will follow that from now on.",
            "Remembered. That holds for the rest of this job.",
        ],
        "paused": [
            "Quick update: I have been working through the flush code and will carry on.",
            "Still on it. I have looked through the flush path and am moving to the fix.",
        ],
        "constraint": [
            "Please remember this for the whole job: {rule}.",
            "A standing rule from the maintainers: {rule}.",
            "Hard requirement here: {rule}.",
        ],
        "plan": [
            "My approach: {plan}, so that {module} keeps what it parked across restarts.",
            "I am going with {plan} first, so nothing {module} parks gets lost.",
        ],
        "change_value": [
            "A {key} of {old} is too tight for the slow partners. Change it to {new}.",
            "Ops wants the {key} moved from {old} to {new}.",
            "Make the {key} {new} instead; {old} keeps paging the on-call.",
        ],
        "change_again": [
            "Sorry, the {key} needs one more change: {old} swamps the partners. Use {new} "
            "and leave it there.",
            "{old} as the {key} failed the load test. {new} it is, final answer.",
            "Please take the {key} down to {new}; {old} did not hold up in staging.",
        ],
        "ack_value": [
            "Updated my memory and config/relaypost.yml: the {key} is {new} now.",
            "config/relaypost.yml now has the {key} at {new}, and my memory says the same.",
        ],
        "reverse": [
            "I need to change course: {old} will not work because {why}. Switching to {new}.",
            "Dropping {old}, since {why}. I am going with {new} instead.",
        ],
        "reverse_again": [
            "Changing course again: {old} has its own problem, {why}. Now going with {new}.",
            "{old} is out as well, because {why}. I am replacing it with {new}.",
        ],
        "question": [
            "Which commit broke the resend? The incident report needs the hash.",
            "Can you find the commit that stopped parked envelopes going out? I need its "
            "hash for the postmortem.",
        ],
        "commit": [
            "Makefile.PL: require HTTP::Tiny 0.088",
            "t: move fixtures under t/data",
            "pod: regenerate the README from Relaypost.pm",
            "ci: cache local::lib between runs",
        ],
        "answer": [
            "It was {sha}: that commit moved the outbox onto the shared HTTP::Tiny client "
            "and lost the retry wrapper on the way.",
            "The culprit is {sha}. It switched the outbox to the shared HTTP::Tiny client, "
            "and the retries did not survive the move.",
        ],
        "measure_question": [
            "How many flush batches per second do we manage? Benchmark it and remember the "
            "rate, it goes into the design notes.",
            "Run a Benchmark of one flush batch and tell me the rate per second. Keep that "
            "number, I need it for the write-up.",
        ],
        "measure_answer": [
            "Benchmark puts one flush batch at {figure} runs per second.",
            "The flush batch runs at {figure} per second according to Benchmark.",
        ],
        "last": [
            "Stopping for now: the test '{test}' is still failing, and my plan block has me "
            "on the step to {todo}. Everything else there is checked off or dropped.",
            "Where this stands: prove still fails '{test}', and the step I am on is to "
            "{todo}. The rest of the plan is done or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._clock = datetime(2026, 11, 24, 9, 2, 40) + timedelta(
            seconds=self.rng.randint(0, 1800)
        )
        self._idle = True  # the last step was a send_message ending the chain
        self._said: int | None = None  # index of that send_message's call, to wake it
        self._pending: tuple[str, dict[str, str]] | None = None  # the user message unanswered
        self._last_phrase: tuple[str, dict[str, str]] = ("", {})
        self._plan: list[str] = []  # the plan block's lines
        self._values: dict[str, str] = {}  # setting → the human block line holding it
        self._alerted = False
        self._read: set[str] = set()
        self._written: list[str] = []
        self._failed_before: list[str] = []
        self._boot()

    # --- time, ids, messages -------------------------------------------------------------

    def _now(self) -> str:
        self._clock += timedelta(seconds=self.rng.randint(2, 40))
        return self._clock.strftime("%Y-%m-%d %I:%M:%S %p UTC+0000")

    def _call_id(self) -> str:
        alphabet = string.ascii_letters + string.digits
        return "call_" + "".join(self.rng.choice(alphabet) for _ in range(24))

    def _packed(self, **fields: str) -> str:
        return json_dumps({**fields, "time": self._now()})

    def _boot(self) -> None:
        """A new agent's first messages: the login event and the agent's greeting. (Letta's
        `startup_with_send_message` boot pair is left out: the agent is created with its own
        `initial_message_sequence`, and a conversation may not open on an assistant turn.)"""
        self.s.messages.append(
            {
                "role": "user",
                "content": json_dumps(
                    {"type": "login", "last_login": "Never (first login)", "time": self._now()}
                ),
            }
        )
        self._append_call("send_message", "Dana just logged in for the first time. Saying hello.",
                          {"message": "Hi Dana, I am set up in the Relaypost checkout. What are "
                           "we working on?"}, "None", heartbeat=False)  # fmt: skip

    def _append_call(
        self,
        name: str,
        thought: str,
        arguments: dict[str, Any],
        result: str,
        *,
        heartbeat: bool = True,
        failed: bool = False,
        filler: bool = False,
    ) -> None:
        """One agent step as Letta sends it: the call (thoughts first, heartbeat flag last),
        the packaged answer, and the heartbeat that hands control back when one was asked."""
        call_id = self._call_id()
        args = {"inner_thoughts": thought, **arguments, "request_heartbeat": heartbeat}
        messages = self.s.messages
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json_dumps(args)}}]})  # fmt: skip
        if len(result) > RETURN_CHAR_LIMIT:
            result = (
                f"{result[:RETURN_CHAR_LIMIT]}... [NOTE: function output was truncated since it "
                f"exceeded the character limit: {len(result)} > {RETURN_CHAR_LIMIT}]"
            )
        answer = json_dumps({"status": "Failed" if failed else "OK", "message": result,
                             "time": self._now()})  # fmt: skip
        messages.append({"role": "tool", "name": name, "tool_call_id": call_id,
                         "content": answer})  # fmt: skip
        if filler:
            self.s.filler_at.update({len(messages) - 2, len(messages) - 1})
        if heartbeat:
            reason = FAILED_HEARTBEAT if failed else REQ_HEARTBEAT
            messages.append(
                {"role": "user", "content": self._packed(type="heartbeat", reason=reason)}
            )
            self._idle, self._said = False, None
        else:
            self._idle, self._said = True, len(messages) - 2

    def _wake(self) -> None:
        """Going on without a user event: the last send_message asks for a heartbeat after
        all (its flag rewritten), or, when nothing was said, a timer heartbeat wakes the agent."""
        if not self._idle:
            return
        if self._said is not None:
            call = self.s.messages[self._said]["tool_calls"][0]["function"]
            args = json.loads(call["arguments"])
            args["request_heartbeat"] = True
            call["arguments"] = json_dumps(args)
            reason = REQ_HEARTBEAT
        else:
            reason = TIMER
        self.s.messages.append(
            {"role": "user", "content": self._packed(type="heartbeat", reason=reason)}
        )
        self._idle, self._said = False, None

    def _act(
        self,
        name: str,
        thought: str,
        arguments: dict[str, Any],
        result: str,
        *,
        failed: bool = False,
        filler: bool = False,
    ) -> None:
        """A working step (it asks for a heartbeat to go on), after the memory edits the
        user's last message called for."""
        self._respond()
        self._append_call(name, thought, arguments, result, failed=failed, filler=filler)

    def _send(self, thought: str, text: str) -> None:
        self._respond()
        self._append_call("send_message", thought, {"message": text}, "None", heartbeat=False)

    # --- memory -------------------------------------------------------------------------

    def _edited(self, label: str) -> str:
        return (
            f"The core memory block with label `{label}` has been edited. Review the changes "
            "and make sure they are as expected (correct indentation, no duplicate lines, etc). "
            "Edit the memory block again if necessary."
        )

    def _memory_insert(self, label: str, text: str, thought: str, *, at: int = -1) -> None:
        self._wake()
        self._append_call("memory_insert", thought,
                          {"label": label, "new_str": text, "insert_line": at},
                          self._edited(label))  # fmt: skip

    def _memory_replace(self, label: str, old: str, new: str, thought: str) -> None:
        self._wake()
        self._append_call("memory_replace", thought,
                          {"label": label, "old_str": old, "new_str": new},
                          self._edited(label))  # fmt: skip

    def _respond(self) -> None:
        """What the agent does first on the user's last message: the memory edit it calls
        for (a value, a changed value, a rule), or a recall search before a question."""
        self._wake()
        if self._pending is None:
            return
        which, values = self._pending
        self._pending = None
        if which == "set_value":
            line = f"- {values['key']}: {values['value']}"
            self._values[values["key"]] = line
            self._memory_insert("human", line, f"Dana set the {values['key']}. Saving it to "
                                "the human block before I answer.")  # fmt: skip
        elif which in ("change_value", "change_again"):
            key = values["key"]
            line = f"- {key}: {values['new']}"
            self._memory_replace("human", self._values[key], line,
                                 f"The {key} changed. Replacing the old line in my human "
                                 "block so I do not use the stale one.")  # fmt: skip
            self._values[key] = line
        elif which == "constraint":
            self._memory_insert("human", f"- Rule: {values['rule']}",
                                "A standing rule. It goes into the human block so it stays "
                                "in view.")  # fmt: skip
        elif which == "question":
            self._append_call("conversation_search",
                              "Did Dana or I mention the breaking commit earlier? Checking "
                              "recall memory first.", {"query": "commit", "page": 0},
                              "No results found.")  # fmt: skip

    # --- how the user and the assistant speak --------------------------------------------

    def phrase(self, which: str, /, **values: str) -> str:
        self._last_phrase = (which, values)
        return super().phrase(which, **values)

    def user(self, text: str) -> None:
        spoken = self._last_phrase  # the story's phrase this message is (before any other)
        if self._pending is not None:
            # Two user messages in a row: the first one is answered before the next arrives.
            self._send("Noting that before anything else.", self.phrase("ack"))
        elif not self._idle:
            # The agent was chaining tool calls: it reports before the user speaks again.
            self._send("Time to tell Dana where things are.", self.phrase("paused"))
        self.s.messages.append({"role": "user", "content": self._packed(
            type="user_message", message=text)})  # fmt: skip
        self._idle, self._said = False, None
        self._pending = spoken

    def say(self, text: str) -> None:
        which, values = self._last_phrase
        if which == "plan":
            self._respond()
            self._memory_insert(
                "plan",
                f"Approach: {values['plan']}",
                "Recording the approach at the top of my plan block.",
                at=0,
            )
        elif which in ("reverse", "reverse_again"):
            self._respond()
            self._memory_replace("plan", f"Approach: {values['old']}",
                                 f"Approach: {values['new']}",
                                 "The approach has to change; my plan block must say the new "
                                 "one, not the old.")  # fmt: skip
        thought = self.pick(["Replying to Dana.", "Letting Dana know.", "Answering now."])
        self._send(thought, text)

    def finish(self, text: str) -> None:
        self._send("Wrapping up this session with a status report.", text)

    # --- the developer's tools -----------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        thought = self.pick([f"Running `{command}`.", f"Next I run {command} in the shell."])
        result = f"exit code {exit_code}" + (f"\n{output}" if output else "")
        self._act("run_shell_command", thought, {"command": command, "timeout": 300}, result,
                  filler=filler)  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        text = "\n".join(perl_line(x) for x in content.split("\n")).rstrip("\n")
        if filler and self.rng.random() < 0.1:
            # A guess at the path that does not exist: the tool raises, Letta says so.
            wrong = path.replace("lib/Relaypost/", "lib/")
            error = (
                "Error executing function read_file: FileNotFoundError: [Errno 2] No such file "
                f"or directory: '{ROOT}/{wrong}'"
            )
            self._act("read_file", f"Reading {wrong}.", {"path": wrong}, error, failed=True,
                      filler=True)  # fmt: skip
            thought = f"Wrong path; the modules are under {self.src}."
        else:
            thought = self.pick([f"Reading {path}.", f"I need to look at {path}."])
        self._read.add(path)
        self._act("read_file", thought, {"path": path}, text, filler=filler)

    def _read_around(self, path: str, line: str) -> None:
        before = code_file(self.rng, "pm", 12)
        text = f"{before}\nsub flush_parked ($batch) {{\n{line}\n}}"
        self._read.add(path)
        self._act("read_file", f"The error is in {path}; reading it.", {"path": path}, text)

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = perl_line(old), perl_line(new)
        if path not in self._read:
            self._read_around(path, old_line)
        self._act("replace_in_file", f"Changing that line in {path}.",
                  {"path": path, "old": old_line, "new": new_line},
                  f"Replaced 1 occurrence in {path}")  # fmt: skip

    def create(self, path: str, content: str) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".pm")
        text = (
            f"package {DIST}::{module};\nuse v5.36;\n\n# The parked envelopes' side of the "
            f"outbox.\n\n{content}\n\n1;\n"
        )
        self._written.append(path)
        self._act("write_file", f"Creating {path}.", {"path": path, "content": text},
                  f"Wrote {len(text.encode())} bytes to {path}")  # fmt: skip

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "t/data/", 1)
        destination = destination.replace("testdata/", "t/data/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        found = "\n".join(h.replace(": ", ":", 1) for h in hits)
        self._act("search_code", f"Where is {pattern} used?", {"pattern": pattern, "path": root},
                  found, filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        self._act("list_directory", f"What is in {root}?", {"path": root},
                  "\n".join(sorted(set(paths))), filler=filler)  # fmt: skip

    # --- the plan block ------------------------------------------------------------------

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        lines = [f"- {MARKS[status]} {text}" for text, status in items]
        self._respond()
        if not self._plan:
            self._memory_insert(
                "plan",
                "\n".join(lines),
                "Writing the steps into my plan block so I can track them.",
            )
            self._plan = lines
            return
        if not self._alerted:
            # The context is filling up: Letta warns, and the agent saves its progress.
            self._alerted = True
            self.s.messages.append({"role": "user", "content": self._packed(
                type="system_alert", message=MEMORY_WARNING)})  # fmt: skip
            done = "; ".join(sorted(self._read)[:4])
            self._append_call("archival_memory_insert",
                              "History is about to be trimmed. Saving where the work stands.",
                              {"content": f"Relaypost resend fix, progress so far: files read "
                               f"include {done}; the plan block tracks the remaining steps."},
                              "None")  # fmt: skip
        for k, line in enumerate(lines):
            if k >= len(self._plan):
                self._memory_insert("plan", line, "A step to add to my plan block.")
            elif line != self._plan[k]:
                self._memory_replace(
                    "plan", self._plan[k], line, "Updating the step's mark in my plan block."
                )
        self._plan = lines

    # --- what the commands print ---------------------------------------------------------

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.pm"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                "relaypost-replay: dry run, nothing will be sent\n"
                f"relaypost-replay: parked={parked} eligible=0 oldest=(none)"
            )
        if k == 1:
            path = self._written[-1] if self._written else f"lib/{DIST}.pm"
            line = self.rng.randint(8, 30)
            return "\n".join(
                [
                    f'{path}: Subroutine does not end with "return" at line {line}, column 1.  '
                    "See page 197 of PBP.  (Severity: 4)",
                    f"{path}: Capture variable used outside conditional at line {line + 3}, "
                    "column 20.  See page 253 of PBP.  (Severity: 3)",
                    f"lib/{DIST}.pm source OK",
                ]
            )
        tarball = f"{DIST}-{VERSION}"
        return "\n".join(
            [
                f"rm -rf {tarball}",
                '"/usr/bin/perl" "-MExtUtils::Manifest=manicopy,maniread" \\',
                f"\t-e \"manicopy(maniread(),'{tarball}', 'best');\"",
                f"mkdir {tarball}",
                f"cd {tarball} && /usr/bin/perl Makefile.PL",
                "Checking if your kit is complete...",
                "Looks good",
                "Generating a Unix-style Makefile",
                f"Writing Makefile for {DIST}",
                "Writing MYMETA.yml and MYMETA.json",
                f"cd {tarball} && make",
                f"cd {tarball} && make test",
                "All tests successful.",
                f"Files=5, Tests={self.rng.randint(60, 90)},  "
                f"{self.rng.randint(2, 5)} wallclock secs",
                "Result: PASS",
            ]
        )

    def _makefile(self, changed: str) -> str:
        return "\n".join(
            [
                "Generating a Unix-style Makefile",
                f"Writing Makefile for {DIST}",
                "Writing MYMETA.yml and MYMETA.json",
                f"cp {changed} blib/{changed}",
                "Manifying 1 pod document",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = self.rng.randint(40, 90)
        where = f"lib/{DIST}/{camel(module)}.pm"
        sub = f"{package(module)}::{module}_send"
        probe = f"Too few arguments for subroutine '{sub}' (got 1; expected 2)"
        output = f"{self._makefile(where)}\n{probe} at {where} line {line}."
        return output, probe, BUILD

    def build_ok(self) -> str:
        envelopes, tenants = self.rng.randint(8, 40), self.rng.randint(2, 6)
        changed = f"lib/{DIST}/Flush.pm"
        return (
            f"{self._makefile(changed)}\n"
            f"relaypost-smoke: flushed {envelopes} parked envelopes for {tenants} tenants"
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        rate = float(figure)
        single = rate * self.rng.uniform(0.45, 0.7)
        n_batch, n_single = int(rate * 5.02), int(single * 5.01)
        faster = round((rate / single - 1) * 100)
        slower = round((single / rate - 1) * 100)
        # cmpthese: names left-aligned, the rates right-aligned, every column as wide as the
        # longest name.
        width = len("flush_single")
        rates = (f"{single:.0f}/s", f"{rate:.0f}/s")
        rw = max(4, *(len(r) for r in rates))
        output = "\n".join(
            [
                "Benchmark: running flush_batch, flush_single for at least 5 CPU seconds...",
                f"flush_batch:  5 wallclock secs ( 5.01 usr +  0.01 sys =  5.02 CPU) @ "
                f"{figure}/s (n={n_batch})",
                f"flush_single:  5 wallclock secs ( 5.00 usr +  0.01 sys =  5.01 CPU) @ "
                f"{single:.2f}/s (n={n_single})",
                f"{'':<{width}} {'Rate':>{rw}} {'flush_single':>{width}} {'flush_batch':>{width}}",
                f"{'flush_single':<{width}} {rates[0]:>{rw}} {'--':>{width}} "
                f"{f'{slower}%':>{width}}",
                f"{'flush_batch':<{width}} {rates[1]:>{rw}} {f'{faster}%':>{width}} "
                f"{'--':>{width}}",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TEST

    def _subtests(self, failed: int, passed: int) -> int:
        """How many tests t/flush.t has: half the run's, the other files sharing the rest."""
        return (failed + passed) // 2

    def test_counts(self, failed: int, passed: int) -> str:
        return f"Failed {failed}/{self._subtests(failed, passed)} subtests"

    @staticmethod
    def _parse(test: str) -> str:
        """The example key of one of the story's test names."""
        for key, (template, *_) in EXAMPLES.items():
            before, after = template.split("{m}")
            if test.startswith(before) and test.endswith(after):
                return key
        raise ValueError(test)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = self._subtests(failed, passed)
        width = max(len(t) for t in (TEST_FILE, *OTHER_TESTS)) + 1
        dots = {t: t + " " + "." * (width - len(t) + 1) for t in (TEST_FILE, *OTHER_TESTS)}
        lines = [f"{dots[t]} ok" for t in OTHER_TESTS[:2]]
        numbers: list[int] = []
        diagnostics: list[str] = []
        for test in failing:
            _, got, expected, at, number = EXAMPLES[self._parse(test)]
            numbers.append(number)
            diagnostics += [
                *([""] if diagnostics else []),  # Test::More parts two failures' diagnostics
                f"#   Failed test '{test}'",
                f"#   at {TEST_FILE} line {at}.",
                f"#          got: '{got}'",
                f"#     expected: '{expected}'",
            ]
        plural = "test" if failed == 1 else "tests"
        status = failed * 256
        lines += [
            f"{dots[TEST_FILE]} 1/? ",
            *diagnostics,
            f"# Looks like you failed {failed} {plural} of {total}.",
            f"{dots[TEST_FILE]} Dubious, test returned {failed} (wstat {status}, {status:#x})",
            f"Failed {failed}/{total} subtests ",
        ]
        lines += [f"{dots[t]} ok" for t in OTHER_TESTS[2:]]
        listed = ", ".join(str(n) for n in sorted(numbers))
        label = "Failed test:" if failed == 1 else "Failed tests:"
        usr = f"{self.rng.randint(1, 9) / 100:.2f}"
        cusr = f"{self.rng.randint(40, 99) / 100:.2f}"
        lines += [
            "",
            "Test Summary Report",
            "-------------------",
            f"{TEST_FILE} (Wstat: {status} (exited {failed}) Tests: {total} Failed: {failed})",
            f"  {label}  {listed}",
            f"  Non-zero exit status: {failed}",
            f"Files={1 + len(OTHER_TESTS)}, Tests={failed + passed},  "
            f"{self.rng.randint(1, 4)} wallclock secs ( {usr} usr  0.01 sys +  {cusr} cusr  "
            f"0.08 csys =  {float(cusr) + float(usr) + 0.09:.2f} CPU)",
            "Result: FAIL",
        ]
        return "\n".join(lines)
