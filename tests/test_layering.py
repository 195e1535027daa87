"""The library stays free of orchestration and evaluation: `pretrain_core` must run without Prefect installed,
the evaluation harness (`pretrain_eval`) imports the library, never the other way, and the libraries of the
`eval` extra are imported by the library only inside the function that needs them (a plot), never at import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "pretrain_core"
ORCHESTRATION = {"prefect", "prefect_dask", "tasks", "flows", "pretrain_eval"}
EVAL_EXTRA = {"matplotlib", "sklearn", "scipy", "faker", "tokenizers", "mimesis"}
EXPORT_EXTRA = {"onnx", "onnxruntime", "onnxscript"}
ONNX_MODULE = "export/onnx_format.py"  # the one module built on the export extra: imported only where ONNX is asked


def _imported_modules(nodes: list[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _library_modules() -> dict[str, ast.Module]:
    """Every module of the library; the demo corpus's code files under data/ are data, not library."""
    paths = [p for p in CORE.rglob("*.py") if "data" not in p.relative_to(CORE).parts]
    return {str(p.relative_to(CORE)): ast.parse(p.read_text(encoding="utf-8")) for p in paths}


def test_core_never_imports_prefect_or_the_orchestration_layers() -> None:
    modules = _library_modules()
    offenders = {
        name: sorted(m for m in _imported_modules(list(ast.walk(tree))) if m.split(".")[0] in ORCHESTRATION)
        for name, tree in modules.items()
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) > 10  # the walk really saw the library


def test_core_imports_no_optional_extra_at_module_level() -> None:
    extras = EVAL_EXTRA | EXPORT_EXTRA
    modules = _library_modules()
    offenders = {
        name: sorted(m for m in _imported_modules(list(tree.body)) if m.split(".")[0] in extras)
        for name, tree in modules.items()
        if name != ONNX_MODULE
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    onnx_importers = [
        name
        for name, tree in modules.items()
        if "pretrain_core.export.onnx_format" in _imported_modules(list(tree.body))
    ]
    assert onnx_importers == []
    assert EXPORT_EXTRA & _imported_modules(list(modules[ONNX_MODULE].body))  # the exemption is still needed


def test_the_config_models_load_without_torch() -> None:
    """`pretrain config`, `--help` and validation of a run's settings must not pay for importing torch (seconds)."""
    probe = "import sys, pretrain_core.config, pretrain_core.train.params; print(sorted({'torch'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _loaded_stage_packages(module: str) -> list[str]:
    """The stage packages (every stage table row's package) a fresh interpreter holds after importing ``module``."""
    probe = (
        "import sys, importlib\n"
        f"importlib.import_module({module!r})\n"
        "loaded = set(sys.modules)\n"
        "from pretrain_core.stages import CORPUS\n"
        "packages = {spec.module.rsplit('.', 1)[0] for spec in CORPUS.stages}\n"
        "print(sorted(packages & loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return ast.literal_eval(done.stdout.strip())


def test_the_contract_loads_no_stage() -> None:
    """The schema is what every stage and the trainer agree on; it must not depend on any one of them."""
    assert _loaded_stage_packages("pretrain_core.schema") == []


def test_the_trainer_loads_no_stage() -> None:
    """Training reads token shards through the contract; no data stage (and its libraries) comes with it."""
    assert _loaded_stage_packages("pretrain_core.train.trainer") == []


def test_prefect_tasks_stay_thin() -> None:
    """Logic lives in the library, where it is tested without an orchestrator; a task only wires it to Prefect."""
    root = CORE.parent / "tasks"
    lengths = {
        f"{path.name}:{node.name}": node.end_lineno - node.lineno + 1
        for path in root.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.end_lineno is not None
        if any("task" in ast.unparse(decorator) for decorator in node.decorator_list)
    }
    assert len(lengths) > 5  # the walk really saw the tasks
    assert {name: lines for name, lines in lengths.items() if lines > 40} == {}


def test_the_train_folder_shows_the_architecture() -> None:
    """Training is sub-packages of small modules: no file past 400 lines, no model forward threading a sequence
    shard (context parallelism is a context), and a step that takes a built parallel model, not its parts."""
    train = CORE / "train"
    assert len([p for p in train.iterdir() if (p / "__init__.py").exists()]) >= 3
    lengths = {str(p.relative_to(CORE)): len(p.read_text(encoding="utf-8").splitlines()) for p in train.rglob("*.py")}
    assert {name: n for name, n in lengths.items() if n > 400} == {}
    forwards = [
        (str(path.relative_to(CORE)), [arg.arg for arg in node.args.args])
        for path in (train / "model").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name == "forward"
    ]
    assert len(forwards) >= 4 and [f for f in forwards if "shard" in f[1]] == []
    step = ast.parse((train / "step.py").read_text(encoding="utf-8"))
    (train_step,) = [n for n in step.body if isinstance(n, ast.FunctionDef) and n.name == "train_step"]
    assert len(train_step.args.args) <= 6
