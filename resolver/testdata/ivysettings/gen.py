#!/usr/bin/env python3
"""Regenerates repos/: small Maven repositories for the ivysettings oracle
(run from this directory). Jars are deterministic zips naming their repo."""
import hashlib, os, shutil, zipfile

G = "org.prebake.ivs"

def pom(a, v, deps=(), packaging="jar"):
    d = "".join(f"<dependency><groupId>{G}</groupId><artifactId>{da}</artifactId><version>{dv}</version></dependency>" for da, dv in deps)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>{G}</groupId><artifactId>{a}</artifactId><version>{v}</version><packaging>{packaging}</packaging>
<dependencies>{d}</dependencies></project>
"""

def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)
    with open(path + ".sha1", "w") as f:
        f.write(hashlib.sha1(data).hexdigest())

def jar(tag):
    import io
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        zi = zipfile.ZipInfo("prebake-ivs.txt", date_time=(1980, 1, 1, 0, 0, 0))
        z.writestr(zi, tag + "\n")
    return b.getvalue()

def m2(repo, a, v, deps=(), with_jar=True):
    d = f"repos/{repo}/{G.replace('.', '/')}/{a}/{v}/"
    put(d + f"{a}-{v}.pom", pom(a, v, deps))
    if with_jar:
        put(d + f"{a}-{v}.jar", jar(f"{a} {v} from {repo}"))

def metadata(repo, a, versions):
    d = f"repos/{repo}/{G.replace('.', '/')}/{a}/"
    vs = "".join(f"<version>{v}</version>" for v in versions)
    put(d + "maven-metadata.xml", f"<metadata><groupId>{G}</groupId><artifactId>{a}</artifactId><versioning><versions>{vs}</versions></versioning></metadata>\n")

shutil.rmtree("repos", ignore_errors=True)
# repo-a: app -> lib 1.0, dyn -> lib [1.0,2.0)
m2("repo-a", "app", "1.0", [("lib", "1.0")])
m2("repo-a", "lib", "1.0")
m2("repo-a", "dyn", "1.0", [("lib", "[1.0,2.0)")])
metadata("repo-a", "lib", ["1.0"])
# repo-b: another lib 1.0 (other bytes), lib 1.1, extra (only here), pomonly's jar
m2("repo-b", "lib", "1.0")
m2("repo-b", "lib", "1.1")
metadata("repo-b", "lib", ["1.0", "1.1"])
m2("repo-b", "extra", "1.0", [("lib", "1.0")])
m2("repo-b", "pomonly", "1.0")
# repo-c: pomonly's POM without its jar
m2("repo-c", "pomonly", "1.0", with_jar=False)
# flat: a non-Maven layout, [module]/[revision]/[artifact]-[revision].[ext]
put("repos/flat/tool/2.0/tool-2.0.pom", pom("tool", "2.0", [("lib", "1.0")]))
put("repos/flat/tool/2.0/tool-2.0.jar", jar("tool 2.0 from flat"))
