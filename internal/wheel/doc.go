// Package wheel reads Python wheels (PEP 427, the binary distribution
// format) and installs them into a site-packages directory, for an image
// layer or a relocatable site-packages archive. No Python runs, and no
// script of a wheel ever runs.
//
// File names: ParseFilename reads {distribution}-{version}(-{build})?-
// {python}-{abi}-{platform}.whl, expands compressed tag sets
// ("py2.py3", "manylinux_2_17_x86_64.manylinux2014_x86_64") and refuses a
// name that is not a bare file name. Project names compare in their PEP 503
// form (NormalizeProject).
//
// Compatibility: Target.Tags lists the tags an image's Python supports,
// best first, as pip ranks them on Linux (testdata/tags holds pip's own
// lists); Target.Compatible ranks one wheel, Target.Best picks one.
//
// Install follows the binary distribution format, with these rules:
//
//   - Root is the site-packages directory (pip install with a target directory): the root
//     of the wheel and its .data/purelib and .data/platlib go there alike
//     (Root-Is-Purelib is read and reported, Installed.Purelib).
//   - .data/scripts are skipped unless WithScripts names a directory under
//     root (then mode 0755, "#!python" rewritten to the interpreter given);
//     .data/data likewise with WithData; .data/headers always; any other
//     file of .data is ErrFormat. Skipped members are verified and listed
//     in Installed.Skipped. Console-script wrappers for entry points are
//     not generated.
//   - The .dist-info directory is kept as is but for INSTALLER ("prebake")
//     and RECORD, rewritten with the installed paths and sha256s (RECORD.jws
//     and RECORD.p7s, which signed the old RECORD, are dropped). No
//     REQUESTED, no direct_url.json.
//   - Every member but RECORD and its signatures must be in RECORD with a
//     sha256, sha384 or sha512 it matches (and its size when given), and
//     every RECORD row must name a member: else ErrRecord.
//   - Every member path stays under root: no absolute path, backslash,
//     empty, "." or ".." segment, control character or invalid UTF-8, and
//     no link, device or FIFO entry (the zip's Unix mode): else
//     safepath.ErrUnsafe. Two members with the same name or names differing
//     only in case (the archive may be unpacked on a case-insensitive file
//     system), two members installed to one path, a file where another
//     needs a directory: ErrDuplicate. Only one .dist-info directory, named
//     for the wheel's project; a WHEEL with Wheel-Version 1.x: else
//     ErrFormat.
//   - Expansion is bounded: the members' total uncompressed size
//     (WithMaxSize, 2 GiB), their number (WithMaxFiles, 262144) and each
//     member's compression ratio over 1 MiB (WithMaxRatio, 200:1); else
//     ErrTooLarge. A member path is at most 1024 bytes. The zip reader
//     also checks each member's size and CRC.
//   - Output is deterministic: files 0644 (0755 when the zip mode has an
//     execute bit), directories 0755, every mtime WithEpoch's (default
//     1970-01-01T00:00:01Z, pass layers.Epoch() for SOURCE_DATE_EPOCH), the
//     RECORD sorted; the member order of the zip does not matter.
//   - Nothing is half-written: root must not exist or be empty; the wheel
//     is installed into a temporary directory beside root, renamed to root
//     once every member is verified (a killed process may leave the
//     temporary ".<root>.tmp-*", never a partial root). So each wheel gets
//     its own root (one layer per wheel; namespace packages merge when the
//     layers stack).
//
// A refused wheel is errdefs.Invalid (exit 65) naming the wheel and the
// member; a write failure errdefs.CantWrite; a bad option or root
// errdefs.BadArgument; a cancelled ctx its error.
package wheel
