"""The agent CLIs users run, ready made: `--agent claude-code` and `--agent codex` expand to the command line, output
format, permissions and environment each needs, so nobody has to rediscover them. The expanded command line is what
the run records (and what its answers' cache key holds); `--command` stays for any other agent."""

from __future__ import annotations

from dataclasses import dataclass, field

from bceval.errors import BcevalError


@dataclass(frozen=True)
class Preset:
    command: str  # without a model: the CLI's own default
    model_flag: str  # how a model reaches it (through {model}, so the run is pinned)
    environment: dict[str, str] = field(default_factory=dict)  # added to the agent's environment
    config_variable: str = ""  # the variable naming its configuration folder
    config_writable: bool = False  # it writes its state there: its copy is bound read-write under bwrap


PRESETS = {
    # stream-json needs --verbose; only the read-only tools are allowed, so a tool that would write, run a shell or
    # reach the web is refused (it shows in the envelope's permission_denials); no session is kept on disk
    "claude-code": Preset(
        "claude -p --output-format stream-json --verbose --no-session-persistence "
        "--allowedTools Read,Glob,Grep --disallowedTools Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch,Task",
        "--model {model}",
        {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
        "CLAUDE_CONFIG_DIR",
    ),
    # the prompt on stdin (`-`), JSON events, no git repository needed, no colour. Not its own sandbox: that runs a
    # helper from CODEX_HOME, which it refuses under /tmp and cannot run from a noexec folder, so every shell command
    # failed; bceval's view (and --sandbox bwrap, read-only but for the grants) confines it instead
    "codex": Preset(
        "codex exec --json --skip-git-repo-check --sandbox danger-full-access --color never",
        "-m {model}",
        {},
        "CODEX_HOME",
        config_writable=True,  # it keeps its databases there, and will not start without them
    ),
}


def preset_command(name: str, model: str | None, command: str | None) -> str:
    """The command line `--agent NAME` stands for (with {model} when a model is given); one line when both it and
    --command are given."""
    if command:
        raise BcevalError(f"--agent {name} and --command are two agents: give one of them")
    preset = PRESETS[name]
    tail = "-" if name == "codex" else ""  # codex reads the prompt from stdin only when told so, as its last word
    return " ".join(part for part in (preset.command, preset.model_flag if model else "", tail) if part)
