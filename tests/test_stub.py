# SPDX-License-Identifier: MIT
"""ncnn_mp.pyi and the built module name the same things, and every stub name has a docstring."""

from __future__ import annotations

import ast
import json

from conftest import REPO, MicroPython

STUB = REPO / "ncnn_mp.pyi"

# How the firmware makes an instance of each class, to look up instance attributes.
SAMPLES = {
    "Allocator": "ncnn_mp.Allocator()",
    "Option": "ncnn_mp.Option()",
    "Mat": "ncnn_mp.Mat(2)",
    "DataReader": "ncnn_mp.DataReader(zeros=True)",
    "Net": "ncnn_mp.Net()",
    "ParamDict": "ncnn_mp.ParamDict()",
    "ModelBin": "ncnn_mp.ModelBin(from_mat_array=[])",
    "Layer": "ncnn_mp.Layer('ReLU')",
    "Extractor": "loaded_net().create_extractor()",
}

# An Extractor needs a Net with weights loaded (create_extractor refuses any other).
LOADED_NET = """
def loaded_net():
    net = ncnn_mp.Net()
    net.load_param_mem("7767517\\n1 1\\nInput data 0 1 data\\n")
    net.load_model(ncnn_mp.DataReader(zeros=True))
    return net
"""


def stub_names() -> dict[str, set[str]]:
    """Module-level names under '', and each class's public members."""
    tree = ast.parse(STUB.read_text())
    names: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[""].add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[""].add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            names[node.name] = {m for m in members if not m.startswith("_")}
    return names


def test_every_stub_name_has_a_docstring() -> None:
    tree = ast.parse(STUB.read_text())
    assert ast.get_docstring(tree)
    undocumented = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not ast.get_docstring(node):
            undocumented.append(node.name)
        if isinstance(node, ast.ClassDef):
            body = node.body
            for i, item in enumerate(body):
                if isinstance(item, ast.AnnAssign):
                    nxt = body[i + 1] if i + 1 < len(body) else None
                    if not (isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)):
                        undocumented.append(f"{node.name}.{ast.unparse(item.target)}")
    assert not undocumented, undocumented


def test_stub_matches_module(micropython: MicroPython) -> None:
    names = stub_names()
    classes = sorted(n for n in names if n)
    missing_samples = set(classes) - set(SAMPLES)
    assert not missing_samples, f"add a sample instance for {missing_samples} in tests/test_stub.py"
    source = "import ncnn_mp, json\n" + LOADED_NET
    source += "public = lambda names: sorted(n for n in names if not n.startswith('_'))\n"
    source += "out = {'': public(dir(ncnn_mp))}\n"
    source += f"stub = {json.dumps({c: sorted(names[c]) for c in classes})}\n"
    for cls in classes:
        source += f"inst = {SAMPLES[cls]}\n"
        source += (f"out[{cls!r}] = public(dir(ncnn_mp.{cls}))\n"
                   f"out[{cls!r} + ' missing'] = [n for n in stub[{cls!r}] "
                   f"if not hasattr(ncnn_mp.{cls}, n) and not hasattr(inst, n)]\n")
    source += "print(json.dumps(out))\n"
    built = json.loads(micropython.check(source))
    assert set(built[""]) == names[""], "module level: stub vs firmware"
    for cls in classes:
        assert set(built[cls]) <= names[cls], f"{cls}: in the firmware, not in the stub"
        assert built[cls + " missing"] == [], f"{cls}: in the stub, not in the firmware"
