#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Structural checks of the source tree, run by `make check`:

1. The include graph has no cycle.  A module is a .c file and its .h
   (lib/zone/load.c and lib/zone/load.h are one module); module A depends
   on B when a file of A includes a header of B.  Checked over lib/ and
   over each program in src/.
2. The directories of lib/ depend on each other in one direction only
   (util -> dns -> zone -> query, and the others beside them): the
   graph of lib/ directories has no cycle either.  The same holds for
   the subdirectories of src/apexd/ (config, process, observe, serve,
   zones, transfers, control; main.c above them all), whose graph is
   printed.
3. No function is longer than MAX_FUNCTION_LINES lines (from the line of
   its opening brace to the line of its closing brace), in lib/ and src/.
4. Every C file of lib/, src/, tests/ and contrib/ is laid out as
   .clang-format says (clang-format, Debian package clang-format).
5. Every source file carries an SPDX licence line.
6. No C file of src/apexd/ is longer than MAX_DAEMON_FILE_LINES lines:
   a file that grows past it holds more than one concept.

Usage: check_structure.py [SRCDIR]   (prints what is wrong, exits 1)
"""

import os
import re
import shutil
import subprocess
import sys

MAX_FUNCTION_LINES = 100
MAX_DAEMON_FILE_LINES = 600
DAEMON = os.path.join("src", "apexd")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def files_under(top, exts):
    """The source files below top; code generated at build time (protoc-c's
    *.pb-c.[ch], the XDP program's bytes in filter_object.c) is not the
    tree's own and is left out."""
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(exts) and ".pb-c." not in f and f != "filter_object.c":
                yield os.path.join(root, f)


def module_of(path):
    return os.path.splitext(path)[0]


def include_graph(srcdir, tree):
    """{module: set(modules)} for the files under srcdir/tree; headers are
    looked up beside the includer, then under the program's own directory
    (src/apexd/ includes "serve/tcp.h"), then under lib/."""
    program = tree.split(os.sep)[:2]
    program = os.path.join(*program) if program[0] == "src" and len(program) == 2 else None
    graph = {}
    for path in files_under(os.path.join(srcdir, tree), (".c", ".h")):
        rel = os.path.relpath(path, srcdir)
        mod = module_of(rel)
        graph.setdefault(mod, set())
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INCLUDE.match(line)
                if not m:
                    continue
                cands = [os.path.join(os.path.dirname(rel), m.group(1))]
                if program is not None:
                    cands.append(os.path.join(program, m.group(1)))
                cands.append(os.path.join("lib", m.group(1)))
                for cand in cands:
                    if os.path.exists(os.path.join(srcdir, cand)):
                        target = module_of(os.path.normpath(cand))
                        if target != mod:
                            graph[mod].add(target)
                        break
    return graph


def find_cycle(graph):
    """One cycle as a list of nodes, or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in graph}
    stack = []

    def visit(n):
        colour[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m, WHITE) == GREY:
                return stack[stack.index(m):] + [m]
            if colour.get(m, WHITE) == WHITE:
                colour[m] = WHITE
                found = visit(m)
                if found:
                    return found
        stack.pop()
        colour[n] = BLACK
        return None

    for n in sorted(graph):
        if colour[n] == WHITE:
            found = visit(n)
            if found:
                return found
    return None


def directory_graph(graph):
    dirs = {}
    for a, targets in graph.items():
        da = os.path.dirname(a)
        dirs.setdefault(da, set())
        for b in targets:
            db = os.path.dirname(b)
            if db != da:
                dirs[da].add(db)
    return dirs


def daemon_layers(graph):
    """The graph of src/apexd/'s subdirectories ({dir: set(dirs)}), from the
    include graph of src/apexd; main.c is its own node, "main"."""
    out = {}
    for a, targets in graph.items():
        da = os.path.relpath(os.path.dirname(a), DAEMON)
        da = "main" if da == "." else da
        out.setdefault(da, set())
        for b in targets:
            if not b.startswith(DAEMON + os.sep):
                continue
            db = os.path.relpath(os.path.dirname(b), DAEMON)
            db = "main" if db == "." else db
            if db != da:
                out[da].add(db)
    return out


def print_layers(layers):
    """Each subdirectory with those it includes, lowest first."""
    print("src/apexd/ subdirectories and what they include:")
    done = set()
    while len(done) < len(layers):
        ready = sorted(d for d in layers if d not in done and layers[d] <= done)
        if not ready:  # a cycle, reported elsewhere
            ready = sorted(d for d in layers if d not in done)
        for d in ready:
            print("  %-10s -> %s" % (d, ", ".join(sorted(layers[d])) or "(nothing)"))
            done.add(d)


def long_daemon_files(srcdir):
    out = []
    for path in files_under(os.path.join(srcdir, DAEMON), (".c", ".h")):
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_DAEMON_FILE_LINES:
            out.append("%s is %d lines long (at most %d in src/apexd/)" % (
                os.path.relpath(path, srcdir), n, MAX_DAEMON_FILE_LINES))
    return out


def long_functions(path):
    """(name, first line, lines) of each function over the limit.  A
    function is a '{' alone at the start of a line after its signature,
    closed by the next '}' at the start of a line (the code's style)."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            sig = lines[i - 1]
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            length = j - start + 1
            m = re.search(r"(\w+)\s*\(", sig)
            k = i - 1
            while m is None and k > 0 and k > i - 6:  # multi-line signature
                k -= 1
                m = re.search(r"(\w+)\s*\(", lines[k])
            if m and length > MAX_FUNCTION_LINES and not sig.rstrip().endswith(("=", "[]")):
                out.append((m.group(1), start + 1, length))
            i = j
        i += 1
    return out


C_TREES = ("lib", "src", os.path.join("tests", "unit"), os.path.join("tests", "fuzz"), "contrib")


def c_files(srcdir):
    for tree in C_TREES:
        for path in files_under(os.path.join(srcdir, tree), (".c", ".h")):
            yield path


def format_problems(srcdir):
    tool = shutil.which("clang-format")
    if tool is None:
        return ["clang-format is not installed (Debian package clang-format): layout not checked"]
    out = []
    for path in c_files(srcdir):
        with open(path, "rb") as f:
            text = f.read()
        done = subprocess.run([tool, "--style=file:" + os.path.join(srcdir, ".clang-format"), path],
                              capture_output=True, check=False)
        if done.returncode != 0:
            out.append("%s: clang-format failed: %s" % (os.path.relpath(path, srcdir),
                                                         done.stderr.decode(errors="replace").strip()))
        elif done.stdout != text:
            out.append("%s: not laid out as .clang-format says (run clang-format -i on it)" %
                       os.path.relpath(path, srcdir))
    return out


SPDX = re.compile(r"SPDX-License-Identifier: \S+")
SPDX_EXTS = (".c", ".h", ".py", ".sh", ".am", ".ac")


def spdx_problems(srcdir):
    out = []
    trees = ("lib", "src", "tests", "contrib", ".ci", "etc", "doc")
    paths = [os.path.join(srcdir, name) for name in ("Makefile.am", "configure.ac")]
    for tree in trees:
        for path in files_under(os.path.join(srcdir, tree), SPDX_EXTS + (".1", ".5", ".8", ".conf", ".in")):
            if os.sep + "corpus" + os.sep in path:
                continue
            paths.append(path)
    paths.append(os.path.join(srcdir, ".ci", "run"))
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            head = f.read(600)
        if not SPDX.search(head):
            out.append("%s: no SPDX-License-Identifier line" % os.path.relpath(path, srcdir))
    return out


def main():
    srcdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    srcdir = os.path.abspath(srcdir)
    errors = []
    trees = ["lib"] + [os.path.join("src", d) for d in sorted(os.listdir(os.path.join(srcdir, "src")))]
    for tree in trees:
        graph = include_graph(srcdir, tree)
        cycle = find_cycle(graph)
        if cycle:
            errors.append("include cycle in %s: %s" % (tree, " -> ".join(cycle)))
        if tree == "lib":
            cycle = find_cycle(directory_graph(graph))
            if cycle:
                errors.append("lib/ directories depend on each other: %s" % " -> ".join(cycle))
        if tree == DAEMON:
            layers = daemon_layers(graph)
            print_layers(layers)
            cycle = find_cycle(layers)
            if cycle:
                errors.append("src/apexd/ subdirectories depend on each other: %s" %
                              " -> ".join(cycle))
    errors += long_daemon_files(srcdir)
    for tree in ("lib", "src"):
        for path in files_under(os.path.join(srcdir, tree), (".c", ".h")):
            for name, line, length in long_functions(path):
                errors.append("%s:%d: %s() is %d lines long (at most %d)" % (
                    os.path.relpath(path, srcdir), line, name, length, MAX_FUNCTION_LINES))
    errors += format_problems(srcdir)
    errors += spdx_problems(srcdir)
    for e in errors:
        print(e)
    if errors:
        print("structure: %d problem(s)" % len(errors))
    else:
        print("structure: include graphs acyclic, lib/ and src/apexd/ layered one way, no "
              "function over %d lines, no src/apexd/ file over %d, layout as .clang-format "
              "says, SPDX lines everywhere" % (MAX_FUNCTION_LINES, MAX_DAEMON_FILE_LINES))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
