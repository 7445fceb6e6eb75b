"""Kernel names of two builds made comparable (development tools: scripts/dev/kernel_unit_compare.sh,
scripts/dev/gemv_split_check.sh). A symbol in an anonymous namespace, or nvcc's internal linkage, carries
a hash of its file that differs between two trees of the same source; `normal` puts the file's name in
its place."""
import re

_START = re.compile(r'(\d+)(_GLOBAL__N_|_INTERNAL_)')
_ANON = re.compile(r'_(?:GLOBAL__N_|INTERNAL)_[0-9a-f]+_\d+_(\w+?)_cu_[0-9a-f]+(?:_\d+)?')


def normal(text: str) -> str:
    """Each length-prefixed anonymous-namespace or internal name in `text` -> ANON[file]."""
    out, pos = [], 0
    for m in _START.finditer(text):
        if m.start() < pos:
            continue
        n = int(m.group(1))
        f = _ANON.fullmatch(text[m.end(1):m.end(1) + n])
        if f:
            out += [text[pos:m.start()], f"ANON[{f.group(1)}]"]
            pos = m.end(1) + n
    return ''.join(out + [text[pos:]])
