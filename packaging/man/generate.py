#!/usr/bin/env python3
"""Man pages and bash completion for ShardScope's programs, generated from
what their one argument parser prints (`--help` of each program and each
shardscope-cli command), so nothing is written twice.

  generate.py --cli PATH --agent PATH [--desktop PATH] --version V --out DIR

writes DIR/man1/shardscope-cli.1.gz, shardscope-engine.1.gz (with --engine),
DIR/man8/shardscope-agent.8.gz (with --agent), DIR/man1/shardscope.1.gz (with
--desktop), DIR/bash-completion/shardscope-cli and, with --changelog FILE,
DIR/changelog.Debian.gz (FILE with @VERSION@ replaced). Pages are gzipped
reproducibly (no name, no time in the header). Exits 1 naming the program
when one of them does not answer --help.
"""
import argparse
import datetime
import gzip
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-h)\b")


def run_help(argv):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if p.returncode != 0 or not p.stdout.strip():
        sys.exit(f"generate.py: {' '.join(argv)} exited {p.returncode}: {p.stderr.strip()}")
    # A program that prints the path it was started as (Qt's parser) is named by its name.
    return p.stdout.replace(argv[0], os.path.basename(argv[0]))


def roff_text(text):
    """Plain text as roff: backslashes escaped, no line read as a request."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def verbatim(text):
    return ".nf\n" + roff_text(text) + "\n.fi\n"


def header(name, section, version, title):
    date = os.environ.get("SOURCE_DATE_EPOCH")
    day = (datetime.datetime.fromtimestamp(int(date), datetime.timezone.utc) if date
           else datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d")
    return (f'.TH "{name.upper()}" "{section}" "{day}" "ShardScope {version}" "{title}"\n'
            f".SH NAME\n{name} \\- ")


def cli_commands(top_help):
    """The command names of `shardscope-cli --help`'s commands: section, in order."""
    names, inside = [], False
    for line in top_help.split("\n"):
        if line.startswith("commands:"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        m = re.match(r"^  ([a-z][a-z-]*)\b", line)
        if inside and m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def section_of(help_text, title):
    """The lines of a help text from `title:` to the next blank line."""
    lines, inside = [], False
    for line in help_text.split("\n"):
        if line.startswith(title + ":"):
            inside = True
        elif inside and not line.strip():
            break
        if inside:
            lines.append(line)
    return "\n".join(lines)


def cli_page(cli, version):
    top = run_help([cli, "--help"])
    commands = cli_commands(top)
    if not commands:
        sys.exit(f"generate.py: {cli} --help lists no commands")
    lines = top.split("\n")
    about = next((l for l in lines[1:] if l.strip()), "")
    page = header("shardscope-cli", "1", version, "ShardScope manual")
    page += "plan and profile 2D sparse parallelism of DLRM-style models\n"
    page += ".SH SYNOPSIS\n.B shardscope-cli\n.I command\n[\\fIoptions\\fR]\n"
    page += ".SH DESCRIPTION\n" + roff_text(about.strip()) + "\n"
    page += ".SH COMMANDS\n" + verbatim(section_of(top, "commands"))
    helps = {}
    for c in commands:
        helps[c] = run_help([cli, c, "--help"])
        page += f'.SS "{c}"\n' + verbatim(helps[c])
    page += ".SH OPTIONS\n" + verbatim(section_of(top, "options"))
    page += ".SH EXIT STATUS\n" + verbatim(section_of(top, "exit codes"))
    page += (".SH SEE ALSO\n.BR shardscope (1),\n.BR shardscope-agent (8).\n"
             "docs/cli.md in ShardScope's sources.\n")
    return page, commands, helps


# What the shardscope-agent package installs and makes, for its page (the package's facts, not the program's).
AGENT_FILES = """.SH FILES
.TP
.I /etc/shardscope/agent.json
The config (shardscope.agent\\-config/1): listen address, cluster, launcher, limits. The package's default
listens on 127.0.0.1:7443 only and runs emulate jobs only.
.TP
.I /etc/shardscope/agent.token
The clients' token, made on first install (0600, user shardscope).
.TP
.I /var/lib/shardscope\\-agent
The store: the agent's key and certificate (identity/) and each job's folder and trace store (jobs/).
.TP
.I /lib/systemd/system/shardscope\\-agent.service
The hardened unit. Nothing starts on install: systemctl enable \\-\\-now shardscope\\-agent.
"""


def program_page(name, section, argv, version, what, extra=""):
    text = run_help(argv)
    page = header(name, section, version, "ShardScope manual") + what + "\n"
    page += ".SH SYNOPSIS\n" + verbatim(text.split("\n\n")[0])
    rest = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    page += ".SH DESCRIPTION\n" + verbatim(rest) + extra
    page += ".SH SEE ALSO\n.BR shardscope-cli (1).\n"
    return page


# Words that follow a command before its options (from the commands' usage lines).
SUBWORDS = {"import": "kineto nsys nccl", "remote": "describe list submit watch cancel fetch", "store": "info"}


def completion(commands, helps):
    cases = []
    for c in commands:
        opts = sorted(set(OPTION.findall(helps[c])) - {"-h"} | {"--help"})
        words = (SUBWORDS.get(c, "") + " " + " ".join(opts)).strip()
        cases.append(f'    {c}) words="{words}" ;;')
    subwords = " ".join(f'[{c}]="{w}"' for c, w in SUBWORDS.items())
    return f"""# bash completion for shardscope-cli, generated from its --help by packaging/man/generate.py
declare -A SUBWORDS_OF=({subwords})
_shardscope_cli() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{' '.join(commands)} --help --version help" -- "$cur"))
    return
  fi
  local words=""
  case "${{COMP_WORDS[1]}}" in
{chr(10).join(cases)}
    help) words="{' '.join(commands)}" ;;
  esac
  local sub="${{SUBWORDS_OF[${{COMP_WORDS[1]}}]}}"
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  # A command's first word (import kineto, remote describe, store info) until one is given.
  if [ -n "$sub" ]; then
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
      [[ " $sub " == *" ${{COMP_WORDS[i]}} "* ]] && sub="" && break
    done
    if [ -n "$sub" ] && [[ "${{COMP_WORDS[COMP_CWORD-1]}}" != --* || "$COMP_CWORD" -eq 2 ]]; then
      COMPREPLY=($(compgen -W "$sub" -- "$cur"))
      [ ${{#COMPREPLY[@]}} -gt 0 ] && return
    fi
  fi
  [ "${{COMP_WORDS[1]}}" = help ] && COMPREPLY=($(compgen -W "$words" -- "$cur")) && return
  COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -o filenames -F _shardscope_cli shardscope-cli
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                    compresslevel=9) as f:
            f.write(text.encode("utf-8"))
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--agent")
    ap.add_argument("--engine")
    ap.add_argument("--changelog")
    ap.add_argument("--desktop")
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    page, commands, helps = cli_page(a.cli, a.version)
    write(os.path.join(a.out, "man1", "shardscope-cli.1.gz"), page)
    write(os.path.join(a.out, "bash-completion", "shardscope-cli"), completion(commands, helps))
    if a.agent:
        write(os.path.join(a.out, "man8", "shardscope-agent.8.gz"),
              program_page("shardscope-agent", "8", [a.agent, "--help"], a.version,
                           "serve ShardScope clients engine runs on a cluster over TLS", AGENT_FILES))
    if a.desktop:
        write(os.path.join(a.out, "man1", "shardscope.1.gz"),
              program_page("shardscope", "1", [a.desktop, "--help"], a.version,
                           "the ShardScope workbench: plan, profile and export 2D sparse parallelism"))
    if a.engine:
        write(os.path.join(a.out, "man1", "shardscope-engine.1.gz"),
              program_page("shardscope-engine", "1", [a.engine, "--help"], a.version,
                           "run a shard plan's training steps, one process per rank, and trace them"))
    if a.changelog:
        with open(a.changelog, encoding="utf-8") as f:
            write(os.path.join(a.out, "changelog.Debian.gz"), f.read().replace("@VERSION@", a.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
