"""Writes testdata/tags/*.txt: the oracle for wheel.Target.Tags.

Each file is the tag list pip selects wheels with
(pip._internal.utils.compatibility_tags.get_supported) for one Linux target:
its vendored packaging's cpython_tags, then compatible_tags with the
interpreter, over _linux_platforms with the machine, glibc and musl set
instead of read from the running system. TestTagsLivePip checks the running
pip's own list against wheel.Target.Tags too. Generated with pip 23.2.1.

Run from internal/wheel: python3 testdata/gentags.py
"""

import sys
from unittest import mock

from pip._vendor.packaging import _manylinux, _musllinux, tags

# name: (python version, abi, machine, glibc, musl[, implementation])
TARGETS = {
    "pp310-x86_64-glibc2.28": ((3, 10), "pypy310_pp73", "x86_64", (2, 28), None, "pp"),
    "cp311-x86_64-glibc2.36": ((3, 11), "cp311", "x86_64", (2, 36), None),
    "cp310-aarch64-glibc2.28": ((3, 10), "cp310", "aarch64", (2, 28), None),
    "cp37-x86_64-glibc2.17": ((3, 7), "cp37m", "x86_64", (2, 17), None),
    "cp312-x86_64-musl1.2": ((3, 12), "cp312", "x86_64", None, (1, 2)),
    "cp39-ppc64le-none": ((3, 9), "cp39", "ppc64le", None, None),
}


def target_tags(py, abi, arch, glibc, musl, impl="cp"):
    musl_version = _musllinux._MuslVersion(*musl) if musl else None
    with mock.patch.object(_manylinux, "_get_glibc_version", return_value=glibc or (-1, -1)), \
            mock.patch.object(_manylinux, "_have_compatible_abi", return_value=True), \
            mock.patch.object(_musllinux, "_get_musl_version", return_value=musl_version), \
            mock.patch.object(tags.sysconfig, "get_platform", return_value="linux-" + arch), \
            mock.patch.object(tags, "_32_BIT_INTERPRETER", False):
        platforms = list(tags._linux_platforms(is_32bit=False))
    interp = "%s%d%d" % (impl, py[0], py[1])
    if impl == "cp":
        yield from tags.cpython_tags(py, [abi], platforms)
    else:
        yield from tags.generic_tags(interp, [abi], platforms)
    yield from tags.compatible_tags(py, interp, platforms)


def main():
    for name, target in TARGETS.items():
        with open("testdata/tags/%s.txt" % name, "w") as f:
            for t in target_tags(*target):
                f.write("%s\n" % t)


if __name__ == "__main__":
    sys.exit(main())
