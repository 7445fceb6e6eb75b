"""The wgmma wrappers' generator (microbench/probes/gen_wgmma_forms.py), run as the build runs it: its header
holds one wrapper per form it lists and calls each once from for_each_wgmma_form, each wrapper's operand
list fits its form. That the header compiles is the build's check (the header lives in the build tree)."""
import os
import re
import runpy
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBES = os.path.join(ROOT, "microbench", "probes")
GENERATOR = os.path.join(PROBES, "gen_wgmma_forms.py")


def generate(tmp_path):
    out = tmp_path / "probes" / "exec_tensor_wgmma_forms.cuh"
    out.parent.mkdir()
    subprocess.run([sys.executable, GENERATOR, str(out)], check=True)
    assert not (tmp_path / "probes" / "exec_tensor_wgmma_forms.cuh.partial").exists()
    return out.read_text(encoding="utf-8")


def listed_forms():
    gen = runpy.run_path(GENERATOR)
    return gen, [(prec, acc, n, k, a) for prec, acc, _, k, _, _ in gen["KINDS"] for n in gen["NS"]
                 for a in gen["A_SOURCES"]]


def test_every_listed_form_has_one_wrapper_and_one_call(tmp_path):
    text = generate(tmp_path)
    gen, forms = listed_forms()
    assert len(forms) == 96 and len(set(forms)) == len(forms)  # 8 type pairs x 6 N x 2 A sources
    structs = re.findall(r"^struct (Wgmma_\w+) \{$", text, re.M)
    calls = re.findall(r"^  f\.template operator\(\)<wgmma_forms::(Wgmma_\w+)>\((.*)\);$", text, re.M)
    names = [gen["struct_name"](prec, acc, n, a) for prec, acc, n, _, a in forms]
    assert structs == names
    assert [name for name, _ in calls] == names
    cpp = gen["CPP_ENUM"]
    for (name, args), (prec, acc, n, k, a) in zip(calls, forms):
        assert args == (f"TensorPrecision::{cpp[prec]}, TensorAccum::{cpp[acc]}, {n}, {k}, "
                        f"{'true' if a == 'reg' else 'false'}"), name


def test_every_wrapper_names_its_form_and_its_operands(tmp_path):
    text = generate(tmp_path)
    gen, forms = listed_forms()
    bodies = re.split(r"^struct ", text, flags=re.M)[1:]
    assert len(bodies) == len(forms)
    suffix = {(prec, acc): s for prec, acc, s, _, _, _ in gen["KINDS"]}
    for body, (prec, acc, n, k, a) in zip(bodies, forms):
        regs = gen["acc_regs"](acc, n)
        assert f"kN = {n}, kK = {k}, kAccRegs = {regs};" in body
        assert f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{suffix[(prec, acc)]} " in body
        accumulators = re.search(r"\{(%[^}]*)\}, ", body).group(1).split(", ")
        assert accumulators == [f"%{i}" for i in range(regs)]
        # Operands: the accumulators, A (a descriptor or 4 registers), B, the scale-d predicate's source.
        inputs = (1 if a == "smem" else 4) + 2
        assert max(int(i) for i in re.findall(r"%(\d+)", body)) == regs + inputs - 1


def test_the_build_generates_the_header_and_nothing_commits_it():
    cmake = open(os.path.join(ROOT, "microbench", "CMakeLists.txt"), encoding="utf-8").read()
    assert "probes/gen_wgmma_forms.py ${GPUPROBE_WGMMA_FORMS_HEADER}" in cmake
    assert not os.path.exists(os.path.join(PROBES, "exec_tensor_wgmma_forms.cuh"))


def test_every_form_has_a_register_count_that_fits_its_tile():
    gen = runpy.run_path(GENERATOR)
    for prec, acc, suffix, k, scaled, transposable in gen["KINDS"]:
        assert k * {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1}[prec] == 32  # one 32-byte row
        for n in gen["NS"]:
            assert gen["acc_regs"](acc, n) * 128 * (2 if acc == "f16" else 1) == 64 * n
