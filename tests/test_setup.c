/* ci/setup-deps (the setup step of make and .ci/run) decides right without installing anything:
 * it runs with a PATH of stub programs (uname, id, dpkg-query, pkg-config, apt-get, brew, the
 * build tools) whose answers each case sets, and HC_SETUP_DRY_RUN=1; the apt-get and brew stubs
 * leave a mark if they are ever run. OpenBLAS is asked for only with --bench, which the Makefile
 * passes for tests/bench_gemm alone (make -n shows it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hc_test.h"

static char dir[512], bin[600];

static int write_stub(const char *name, const char *body)
{
    return hc_write_script(hc_path(bin, name), "%s\n", body);
}

/* Links a real program into the stub directory (the script needs grep). */
static int link_real(const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ln -sf \"$(command -v %s)\" %s/%s", name, bin, name);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs the script in one world: env sets the stubs' answers (STUB_* variables), extra the
 * script's arguments. Returns its exit status; *err gets its stderr (dir/err.txt) as text. */
static int run(const char *env, const char *extra, const char **err)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -f %s/apt-ran %s/brew-ran; env -i PATH=%s HOME=/nonexistent CC=cc HC_SETUP_DRY_RUN=1 STUB_DIR=%s %s "
             "/bin/sh ci/setup-deps %s >%s/out.txt 2>%s/err.txt",
             dir, dir, bin, dir, env, extra, dir, dir);
    int st = system(cmd);
    *err = hc_text(hc_path(dir, "err.txt"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int marked(const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

#define DEB_ALL "build-essential pkg-config zlib1g-dev libopenblas-dev libyaml-dev libxml2-dev libjansson-dev parallel"
#define MODS_ALL "zlib yaml-0.1 libxml-2.0 jansson openblas"
/* What a plain build needs: everything but OpenBLAS. */
#define DEB_BUILD "build-essential pkg-config zlib1g-dev libyaml-dev libxml2-dev libjansson-dev parallel"
#define MODS_BUILD "zlib yaml-0.1 libxml-2.0 jansson"
/* dpkg-query -W -f='${Architecture} ${Status}\n' NAME[:ARCH], as dpkg answers it: a line for each
 * installed copy (of that architecture, when one is named). STUB_INSTALLED lists NAME (the native
 * architecture, amd64) or NAME:ARCH (ARCH may be all). */
#define DPKG_QUERY                                                                                   \
    "q=$3; n=${q%%:*}; rc=1\n"                                                                       \
    "for p in $STUB_INSTALLED; do\n"                                                                 \
    "  case $p in *:*) pn=${p%%:*}; pa=${p##*:} ;; *) pn=$p; pa=amd64 ;; esac\n"                     \
    "  [ \"$pn\" = \"$n\" ] || continue\n"                                                           \
    "  case $q in *:*) [ \"$pa\" = \"${q##*:}\" ] || continue ;; esac\n"                             \
    "  echo \"$pa install ok installed\"; rc=0\n"                                                    \
    "done\n"                                                                                         \
    "exit $rc"
#define DPKG                                                                                         \
    "case $1 in --print-architecture) echo amd64 ;; --print-foreign-architectures) "                 \
    "for a in $STUB_FOREIGN; do echo $a; done ;; *) exit 1 ;; esac"

int main(void)
{
    hc_plan(38);
    const char *t = hc_tmpdir("test_setup");
    snprintf(dir, sizeof dir, "%s", t ? t : "build/tmp/test_setup");
    snprintf(bin, sizeof bin, "%s/bin", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", bin, bin);
    int ok = system(cmd) == 0;
    ok = ok && write_stub("uname", "echo \"$STUB_UNAME\"") == 0 &&
         write_stub("id", "[ \"$1\" = -u ] && echo \"$STUB_UID\"") == 0 &&
         write_stub("dpkg-query", DPKG_QUERY) == 0 && write_stub("dpkg", DPKG) == 0 &&
         write_stub("apt-get", "touch \"$STUB_DIR/apt-ran\"") == 0 &&
         write_stub("brew", "touch \"$STUB_DIR/brew-ran\"") == 0 &&
         write_stub("cc", "exit 0") == 0 && write_stub("make", "exit 0") == 0 &&
         write_stub("parallel", "exit 0") == 0 && link_real("grep") == 0;
    /* pkg-config knows the modules listed in STUB_MODULES. */
    ok = ok && write_stub("pkg-config", "[ \"$1\" = --exists ] || exit 1; for m in $STUB_MODULES; do [ \"$m\" = \"$2\" ] "
                                        "&& exit 0; done; exit 1") == 0;
    if (!hc_check("setup-0.1", ok, "cannot build the stub directory %s", bin)) {
        hc_fail_rest("setup-1..8", "not run: no stub directory (setup-0.1 failed)");
        return hc_test_exit();
    }

    /* Debian, everything there: silent success, nothing run. */
    const char *e;
    int rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'", "", &e);
    hc_check("setup-1.1", rc == 0, "all present: exit %d: %s", rc, e);
    hc_check("setup-1.2", !*e && !*hc_text(hc_path(dir, "out.txt")), "all present but it printed: %s", e);
    hc_check("setup-1.3", !marked("apt-ran") && !marked("brew-ran"), "a package manager was run");

    /* Debian, not root, jansson missing: the exact command, exit 1, nothing installed. */
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='build-essential pkg-config zlib1g-dev libopenblas-dev "
             "libyaml-dev libxml2-dev parallel' STUB_MODULES='zlib yaml-0.1 libxml-2.0 openblas'",
             "", &e);
    hc_check("setup-2.1", rc == 1, "not root, a package missing: exit %d (want 1)", rc);
    hc_check("setup-2.2",
             strstr(e, "sudo apt-get update && sudo apt-get install -y --no-install-recommends libjansson-dev\n") != NULL,
             "no exact apt-get command for libjansson-dev alone: %s", e);
    hc_check("setup-2.3", !marked("apt-ran"), "apt-get ran without root");

    /* Debian as root (dry run): says it installs the missing packages with apt-get. */
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_INSTALLED='build-essential pkg-config zlib1g-dev libopenblas-dev "
             "libyaml-dev libxml2-dev' STUB_MODULES='zlib yaml-0.1 libxml-2.0 openblas'",
             "", &e);
    hc_check("setup-3.1", rc == 0, "root, dry run: exit %d: %s", rc, e);
    hc_check("setup-3.2", strstr(e, "installing missing Debian packages with apt-get") && strstr(e, "libjansson-dev parallel"),
             "does not say what it installs: %s", e);
    hc_check("setup-3.3",
             strstr(e, "would run: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
                       "--no-install-recommends libjansson-dev parallel") != NULL,
             "dry run does not show the command: %s", e);
    hc_check("setup-3.4", !marked("apt-ran"), "apt-get ran in a dry run");

    /* Extra packages (.ci/run's fuzz toolchain) are asked of dpkg even when the build has all. */
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_ALL " clang-14' STUB_MODULES='" MODS_ALL "'",
             "clang-14 libfuzzer-14-dev", &e);
    hc_check("setup-4.1", rc == 1 && strstr(e, "install -y --no-install-recommends libfuzzer-14-dev\n"),
             "extras: exit %d: %s", rc, e);

    /* Debian packages installed but pkg-config does not see a module: no reinstall, a hint. */
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='zlib yaml-0.1 libxml-2.0 openblas'",
             "", &e);
    hc_check("setup-4.2", rc == 1 && strstr(e, "jansson") && strstr(e, "PKG_CONFIG_PATH") && !marked("apt-ran"),
             "installed but unseen: exit %d: %s", rc, e);

    /* Packages of another architecture (.ci/run's cross build: NAME:arm64): the architecture is
     * added to dpkg first, unless dpkg has it already. */
    ok = 1;
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'",
             "zlib1g-dev:arm64 qemu-user libyaml-dev:arm64", &e);
    hc_check("setup-8.1",
             ok && rc == 0 &&
                 strstr(e, "would run: dpkg --add-architecture arm64 && apt-get update && DEBIAN_FRONTEND=noninteractive "
                           "apt-get install -y --no-install-recommends zlib1g-dev:arm64 qemu-user libyaml-dev:arm64\n"),
             "multiarch, root: exit %d: %s", rc, e);
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_FOREIGN='i386 arm64' STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'",
             "zlib1g-dev:arm64", &e);
    hc_check("setup-8.2", rc == 0 && strstr(e, "would run: apt-get update && ") && !strstr(e, "--add-architecture"),
             "arm64 already added: exit %d: %s", rc, e);
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'", "zlib1g-dev:arm64", &e);
    hc_check("setup-8.3",
             rc == 1 && strstr(e, "    sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install -y "
                                  "--no-install-recommends zlib1g-dev:arm64\n") && !marked("apt-ran"),
             "multiarch, not root: exit %d: %s", rc, e);

    /* Multiarch: the arm64 copies of the -dev packages (a cross build's) installed, the native
     * libyaml-dev not. pkg-config does not find yaml-0.1, and dpkg must not count the arm64 copy:
     * the native one is installed (root) or its exact command printed. */
#define DEB_ARM64 " libc6:arm64 zlib1g-dev:arm64 libyaml-dev:arm64 libxml2-dev:arm64 libjansson-dev:arm64"
#define DEB_NO_YAML "build-essential pkg-config zlib1g-dev libopenblas-dev libxml2-dev libjansson-dev parallel:all"
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_INSTALLED='" DEB_NO_YAML DEB_ARM64 "' STUB_MODULES='zlib libxml-2.0 jansson openblas'",
             "", &e);
    hc_check("setup-9.1",
             rc == 0 && strstr(e, "would run: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
                                  "--no-install-recommends libyaml-dev\n") && !strstr(e, "although"),
             "arm64 libyaml-dev only, root: exit %d: %s", rc, e);
    hc_check("setup-9.2", !marked("apt-ran"), "apt-get ran in a dry run");
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_NO_YAML DEB_ARM64 "' STUB_MODULES='zlib libxml-2.0 jansson openblas'",
             "", &e);
    hc_check("setup-9.3",
             rc == 1 && strstr(e, "    sudo apt-get update && sudo apt-get install -y --no-install-recommends libyaml-dev\n"),
             "arm64 libyaml-dev only, not root: exit %d: %s", rc, e);
    /* An extra named with its architecture is judged by that one: the native copy is no answer. */
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'", "libyaml-dev:arm64", &e);
    hc_check("setup-9.4", rc == 1 && strstr(e, "--no-install-recommends libyaml-dev:arm64\n"),
             "libyaml-dev:arm64 wanted, only the native one there: exit %d: %s", rc, e);
    /* A Linux cross compiler (its -dumpmachine) requires the target's libraries: the arm64 ones. */
    ok = write_stub("xcc", "[ \"$1\" = -dumpmachine ] && echo aarch64-linux-gnu; exit 0") == 0;
    rc = run("STUB_UNAME=Linux STUB_UID=1000 CC=xcc STUB_INSTALLED='" DEB_ALL " libc6:arm64 zlib1g-dev:arm64 "
             "libxml2-dev:arm64' STUB_MODULES='" MODS_ALL "'",
             "", &e);
    hc_check("setup-9.5",
             ok && rc == 1 && strstr(e, "--no-install-recommends libyaml-dev:arm64 libjansson-dev:arm64\n"),
             "cross compiler, arm64 libraries missing: exit %d: %s", rc, e);
    rc = run("STUB_UNAME=Linux STUB_UID=1000 CC=xcc STUB_INSTALLED='" DEB_ALL DEB_ARM64 "' STUB_MODULES='" MODS_ALL "'", "", &e);
    hc_check("setup-9.6", rc == 0 && !*e, "cross compiler, all there: exit %d: %s", rc,
             e);

    /* OpenBLAS only for --bench (make bench): a plain build's setup passes without it. */
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_BUILD "' STUB_MODULES='" MODS_BUILD "'", "", &e);
    hc_check("setup-10.1", rc == 0 && !*e, "no OpenBLAS, plain build: exit %d: %s", rc,
             e);
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_BUILD "' STUB_MODULES='" MODS_BUILD "'", "--bench", &e);
    hc_check("setup-10.2",
             rc == 1 && strstr(e, "    sudo apt-get update && sudo apt-get install -y --no-install-recommends libopenblas-dev\n"),
             "no OpenBLAS, --bench, not root: exit %d: %s", rc, e);
    rc = run("STUB_UNAME=Linux STUB_UID=0 STUB_INSTALLED='" DEB_BUILD "' STUB_MODULES='" MODS_BUILD "'", "--bench clang-14", &e);
    hc_check("setup-10.3",
             rc == 0 && strstr(e, "would run: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
                                  "--no-install-recommends libopenblas-dev clang-14\n") && !marked("apt-ran"),
             "no OpenBLAS, --bench with an extra, root: exit %d: %s", rc, e);
    rc = run("STUB_UNAME=Linux STUB_UID=1000 STUB_INSTALLED='" DEB_ALL "' STUB_MODULES='" MODS_ALL "'", "--bench", &e);
    hc_check("setup-10.4", rc == 0 && !*e, "OpenBLAS there, --bench: exit %d: %s", rc,
             e);
    rc = run("STUB_UNAME=Darwin STUB_UID=501 STUB_MODULES='" MODS_BUILD "'", "", &e);
    hc_check("setup-10.5", rc == 0 && !*e, "macOS without OpenBLAS, plain build: exit %d: %s",
             rc, e);
    rc = run("STUB_UNAME=Darwin STUB_UID=501 STUB_MODULES='" MODS_BUILD "'", "--bench", &e);
    hc_check("setup-10.6", rc == 1 && strstr(e, "    brew install openblas\n") && !marked("brew-ran"),
             "macOS without OpenBLAS, --bench: exit %d: %s", rc, e);
    /* The Makefile passes --bench for bench_gemm (make bench) and for nothing make test builds. */
    snprintf(cmd, sizeof cmd,
             "unset MAKEFLAGS MFLAGS MAKELEVEL; make -n SETUP=1 CUDA=0 test > %s/make-test.txt 2>&1; "
             "make -n SETUP=1 CUDA=0 bench > %s/make-bench.txt 2>&1",
             dir, dir);
    ok = system(cmd) == 0;
    const char *mt = hc_text(hc_path(dir, "make-test.txt"));
    hc_check("setup-10.7", ok && strstr(mt, "sh ci/setup-deps\n") && !strstr(mt, "--bench"),
             "make -n test: no plain setup step, or --bench: %.2000s", mt);
    const char *mb = hc_text(hc_path(dir, "make-bench.txt"));
    hc_check("setup-10.8", ok && strstr(mb, "sh ci/setup-deps --bench\n"), "make -n bench: no setup-deps --bench: %.2000s", mb);

    /* macOS with Homebrew: the exact brew command, and brew is never run. */
    rc = run("STUB_UNAME=Darwin STUB_UID=501 STUB_MODULES='zlib libxml-2.0 openblas'", "", &e);
    hc_check("setup-5.1", rc == 1, "macOS, missing: exit %d (want 1)", rc);
    hc_check("setup-5.2", strstr(e, "    brew install libyaml jansson\n") != NULL, "no exact brew command: %s", e);
    hc_check("setup-5.3", !marked("brew-ran") && !marked("apt-ran"), "a package manager was run on macOS");
    rc = run("STUB_UNAME=Darwin STUB_UID=501 STUB_MODULES='" MODS_ALL "'", "", &e);
    hc_check("setup-5.4", rc == 0 && !*e, "macOS, all present: exit %d: %s", rc, e);

    /* macOS without Homebrew, and without pkg-config: every module is missing, and it says how. */
    snprintf(cmd, sizeof cmd, "rm -f %s/brew %s/pkg-config", bin, bin);
    ok = system(cmd) == 0;
    rc = run("STUB_UNAME=Darwin STUB_UID=501", "", &e);
    hc_check("setup-6.1", ok && rc == 1 && strstr(e, "https://brew.sh") &&
                              strstr(e, "brew install pkg-config zlib libyaml libxml2 jansson\n"),
             "macOS without brew: exit %d: %s", rc, e);
    hc_check("setup-6.2", !marked("brew-ran"), "brew ran");

    /* Another Linux (no dpkg-query): names what is missing, exit 1. */
    snprintf(cmd, sizeof cmd, "rm -f %s/dpkg-query", bin);
    ok = system(cmd) == 0;
    rc = run("STUB_UNAME=Linux STUB_UID=0", "", &e);
    hc_check("setup-7.1", ok && rc == 1 && strstr(e, "pkg-config") && strstr(e, "jansson"),
             "other Linux: exit %d: %s", rc, e);
    hc_check("setup-7.2", !marked("apt-ran"), "apt-get ran without dpkg");
    return hc_test_exit();
}
