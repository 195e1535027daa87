"""Programming language of a source file from its name: extension first, then well-known extension-less names."""

from __future__ import annotations

from collections.abc import Mapping

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".m": "objective-c",
    ".mm": "objective-cpp",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".pl": "perl",
    ".pm": "perl",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".clj": "clojure",
    ".dart": "dart",
    ".sql": "sql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".vue": "vue",
    ".md": "markdown",
    ".rst": "restructuredtext",
    ".tex": "tex",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".proto": "protobuf",
    ".cmake": "cmake",
    ".mk": "makefile",
    ".f90": "fortran",
    ".asm": "assembly",
    ".s": "assembly",
}

FILE_NAMES: dict[str, str] = {
    "Makefile": "makefile",
    "GNUmakefile": "makefile",
    "makefile": "makefile",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
}


def language_of_path(path: object, overrides: Mapping[str, str]) -> str | None:
    """The language of a record's path field (any value: a record may hold null or a number there); None if it
    names no known language."""
    if not isinstance(path, str) or not path:
        return None
    return language_of(path.replace("\\", "/").rsplit("/", 1)[-1], overrides)


def language_of(file_name: str, overrides: Mapping[str, str]) -> str | None:
    """The language of a file name, `overrides` (extension → language) winning over the defaults; None if unknown."""
    if file_name in FILE_NAMES:
        return FILE_NAMES[file_name]
    if "." not in file_name.lstrip("."):
        return None
    extension = "." + file_name.rsplit(".", 1)[-1]
    for table in (overrides, EXTENSIONS):
        for candidate in (extension, extension.lower()):
            if candidate in table:
                return table[candidate]
    return None
