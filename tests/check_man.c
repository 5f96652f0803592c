/*
 * check_man.c - the manual covers the API, and renders cleanly:
 *
 *   every_call_has_a_page   each function include/shmam.h declares is named
 *                           in the NAME section of exactly one page of
 *                           man/man3/, and written in that page's SYNOPSIS.
 *   pages_name_only_calls   every name of those NAME sections is a function
 *                           the header declares, and each page's file is
 *                           named for one of its names.
 *   pages_render_cleanly    `man --warnings -l` of every page under man/
 *                           prints no warning.
 *   installed_names_open    after `make install-man` into a scratch
 *                           directory, `man NAME` opens, for every declared
 *                           function, the page that documents it (the other
 *                           names of a page are .so links to it).
 *   python_names_listed     every public name of the Python package
 *                           (python/shmam/__init__.py: its __all__ and its
 *                           public top-level names, tests/py_public_names.py)
 *                           is set in bold in man/shmam-python.7, as
 *                           shmam.NAME.
 *   python_names_exist      every shmam.NAME that man/shmam-python.7 writes is
 *                           a public name of the package.
 *
 * Run from the repository root (run-tests.sh does).
 */
#include <check.h>
#include <ctype.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define MAX_NAMES 128
#define MAX_PAGES 64
#define TEXT_MAX (128 * 1024)

static struct tu_output out;

/* A set of names, each kept once, with the page it came from. */
struct names {
    int n;
    char *name[MAX_NAMES];
    char *page[MAX_NAMES];
};

static int find(const struct names *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return i;
    return -1;
}

static void add(struct names *s, const char *name, size_t len, const char *page)
{
    ck_assert_msg(s->n < MAX_NAMES, "more than %d names", MAX_NAMES);
    s->name[s->n] = strndup(name, len);
    s->page[s->n++] = page ? strdup(page) : NULL;
}

static void release(struct names *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->name[i]);
        free(s->page[i]);
    }
    s->n = 0;
}

/* The whole of file path, NUL-terminated, into a static buffer. */
static char *slurp(const char *path)
{
    static char text[TEXT_MAX];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: run from the repository root", path);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    return text;
}

static int is_ident(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The functions include/shmam.h declares: a line that starts with a type (a
 * lower-case letter at its first column) naming an am_ identifier followed
 * by '(', the first such on the line: "int am_poll(", "am_ep_t *am_token_ep(". */
static void declared(struct names *s)
{
    char *save = NULL;
    for (char *line = strtok_r(slurp("include/shmam.h"), "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!islower((unsigned char)line[0]) || strncmp(line, "typedef", 7) == 0)
            continue;
        for (char *p = line; *p; p++) {
            if (strncmp(p, "am_", 3) != 0 || (p > line && is_ident(p[-1])))
                continue;
            char *q = p;
            while (is_ident(*q))
                q++;
            if (*q == '(') {
                add(s, p, (size_t)(q - p), NULL);
                break;
            }
            p = q;
        }
    }
}

/* The text of section `sh` of a page (from the line after ".SH sh" to the
 * next ".SH"), into buf. */
static void section(const char *text, const char *sh, char *buf, size_t n)
{
    char head[64];
    snprintf(head, sizeof head, "\n.SH %s\n", sh);
    const char *p = strstr(text, head);
    buf[0] = '\0';
    if (!p)
        return;
    p += strlen(head);
    const char *end = strstr(p, "\n.SH ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static glob_t pages;

static void man3_pages(void)
{
    globfree(&pages);
    ck_assert_msg(glob("man/man3/am_*.3", 0, NULL, &pages) == 0 && pages.gl_pathc > 0,
                  "no man/man3/am_*.3: run from the repository root");
}

/* The names of every page's NAME section (before its "\-"), with their page;
 * a page that names one function twice, or one named by two pages, fails. */
static void named(struct names *s)
{
    static char sec[8192];
    man3_pages();
    for (size_t i = 0; i < pages.gl_pathc; i++) {
        const char *page = pages.gl_pathv[i];
        section(slurp(page), "NAME", sec, sizeof sec);
        char *dash = strstr(sec, "\\-");
        ck_assert_msg(dash != NULL, "%s: its NAME section has no \\-", page);
        for (char *p = sec; p < dash;) {
            if (!is_ident(*p)) {
                p++;
                continue;
            }
            char *q = p;
            while (is_ident(*q))
                q++;
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
            int at = find(s, name);
            ck_assert_msg(at < 0, "%s is named by %s and %s", name,
                          at < 0 ? "" : s->page[at], page);
            add(s, p, (size_t)(q - p), page);
            p = q;
        }
    }
}

START_TEST(every_call_has_a_page)
{
    struct names decl = {0}, man = {0};
    static char syn[16384];
    declared(&decl);
    ck_assert_msg(decl.n >= 40, "only %d functions found in include/shmam.h", decl.n);
    named(&man);
    for (int i = 0; i < decl.n; i++) {
        int at = find(&man, decl.name[i]);
        ck_assert_msg(at >= 0, "%s (include/shmam.h) has no page in man/man3/",
                      decl.name[i]);
        section(slurp(man.page[at]), "SYNOPSIS", syn, sizeof syn);
        char call[160];
        snprintf(call, sizeof call, "%s(", decl.name[i]);
        ck_assert_msg(strstr(syn, call), "%s: its SYNOPSIS lacks %s)", man.page[at], call);
    }
    release(&decl);
    release(&man);
}
END_TEST

START_TEST(pages_name_only_calls)
{
    struct names decl = {0}, man = {0};
    declared(&decl);
    named(&man);
    for (int i = 0; i < man.n; i++)
        ck_assert_msg(find(&decl, man.name[i]) >= 0,
                      "%s names %s, which include/shmam.h does not declare", man.page[i],
                      man.name[i]);
    for (size_t i = 0; i < pages.gl_pathc; i++) {
        const char *base = strrchr(pages.gl_pathv[i], '/') + 1;
        char own[128];
        snprintf(own, sizeof own, "%.*s", (int)(strlen(base) - 2), base);
        int at = find(&man, own);
        ck_assert_msg(at >= 0 && strcmp(man.page[at], pages.gl_pathv[i]) == 0,
                      "%s is not named for a function it documents", pages.gl_pathv[i]);
    }
    release(&decl);
    release(&man);
}
END_TEST

START_TEST(pages_render_cleanly)
{
    glob_t all;
    ck_assert_int_eq(glob("man/*.[1-8]", 0, NULL, &all), 0);
    ck_assert_int_eq(glob("man/man3/*.3", GLOB_APPEND, NULL, &all), 0);
    ck_assert_msg(all.gl_pathc >= 10, "only %zu pages under man/", all.gl_pathc);
    const char *env[] = {"MANWIDTH=80", "MAN_KEEP_FORMATTING", "MANPAGER=cat", NULL};
    for (size_t i = 0; i < all.gl_pathc; i++) {
        const char *argv[] = {"man", "--warnings", "-l", all.gl_pathv[i], NULL};
        int rc = tu_run_capture(argv, env, TU_ERR_APART, 60, &out);
        ck_assert_msg(rc == 0 && out.err_len == 0, "man --warnings -l %s: exit %d:\n%s",
                      all.gl_pathv[i], rc, out.err);
        ck_assert_msg(out.len > 200, "%s renders to %zu bytes", all.gl_pathv[i], out.len);
    }
    globfree(&all);
}
END_TEST

START_TEST(installed_names_open)
{
    char dir[] = "/tmp/shmam-man.XXXXXX", destdir[PATH_MAX], manpath[PATH_MAX + 32];
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(destdir, sizeof destdir, "DESTDIR=%s", dir);
    const char *make[] = {
        "make", "-s", "--no-print-directory", "install-man", destdir, "PREFIX=/usr", NULL};
    int rc = tu_run_capture(make, NULL, TU_ERR_MERGED, 120, &out);
    ck_assert_msg(rc == 0, "make install-man: exit %d: %s", rc, out.out);
    snprintf(manpath, sizeof manpath, "%s/usr/share/man", dir);
    struct names decl = {0};
    declared(&decl);
    const char *env[] = {"MANWIDTH=200", "MANPAGER=cat", NULL};
    for (int i = 0; i < decl.n; i++) {
        const char *argv[] = {"man", "-M", manpath, "3", decl.name[i], NULL};
        rc = tu_run_capture(argv, env, TU_ERR_MERGED, 60, &out);
        /* The NAME section's first lines, where the page names its calls. */
        char *name = strstr(out.out, "NAME");
        char *syn = name ? strstr(name, "SYNOPSIS") : NULL;
        ck_assert_msg(rc == 0 && syn, "man %s: exit %d: %.300s", decl.name[i], rc, out.out);
        *syn = '\0';
        char *at = strstr(name, decl.name[i]);
        size_t len = strlen(decl.name[i]);
        while (at && (is_ident(at[-1]) || is_ident(at[len])))
            at = strstr(at + 1, decl.name[i]);
        ck_assert_msg(at != NULL, "man %s opens a page that does not name it:\n%s",
                      decl.name[i], name);
    }
    release(&decl);
    const char *rm[] = {"rm", "-rf", dir, NULL};
    tu_run_capture(rm, NULL, TU_ERR_MERGED, 60, &out);
}
END_TEST

/* The words of man/shmam-python.7 set in bold: on .B, .BR, .RB, .BI and .IB
 * lines (all their words: the test asks only that a name be shown), and in
 * \fB...\f spans.  Each word is bounded by what cannot be in a Python name. */
static int bold_in(const char *text, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = text; (p = strstr(p, word)) != NULL; p += len) {
        if ((p > text && is_ident(p[-1])) || is_ident(p[len]))
            continue;
        const char *bol = p;
        while (bol > text && bol[-1] != '\n')
            bol--;
        if (bol[0] == '.' && (bol[1] == 'B' || bol[2] == 'B') && strchr(" BRI", bol[2]))
            return 1;
        const char *fb = p;
        while (fb > bol && strncmp(fb, "\\fB", 3) != 0 && strncmp(fb, "\\f", 2) != 0)
            fb--;
        if (strncmp(fb, "\\fB", 3) == 0)
            return 1;
    }
    return 0;
}

/* The public names of the Python package, one a line, into names (from its
 * source: tests/py_public_names.py says which names are public). */
static int python_names(char *names, size_t n)
{
    const char *argv[] = {"/usr/bin/python3", "tests/py_public_names.py", NULL};
    int rc = tu_run_capture(argv, NULL, TU_ERR_APART, 60, &out);
    ck_assert_msg(rc == 0, "tests/py_public_names.py: exit %d: %s", rc, out.err);
    snprintf(names, n, "%s", out.out);
    int count = 0;
    for (const char *p = names; (p = strchr(p, '\n')) != NULL; p++)
        count++;
    ck_assert_msg(count >= 20, "only %d public names found in python/shmam", count);
    return count;
}

START_TEST(python_names_listed)
{
    static char names[TU_OUT_MAX];
    python_names(names, sizeof names);
    const char *text = slurp("man/shmam-python.7");
    char *save = NULL, qualified[160];
    for (char *w = strtok_r(names, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
        snprintf(qualified, sizeof qualified, "shmam.%s", w);
        ck_assert_msg(bold_in(text, qualified),
                      "%s is not listed (in bold) in man/shmam-python.7", qualified);
    }
}
END_TEST

/* Every shmam.NAME the page writes is a public name of the package: the page
 * names nothing the package lacks.  ("shmam.h" is the C header.) */
START_TEST(python_names_exist)
{
    static char names[TU_OUT_MAX];
    int count = python_names(names, sizeof names), seen = 0;
    const char *text = slurp("man/shmam-python.7");
    for (const char *p = text; (p = strstr(p, "shmam.")) != NULL; p += 6) {
        const char *w = p + 6, *e = w;
        while (is_ident(*e))
            e++;
        if ((p > text && (is_ident(p[-1]) || p[-1] == '/')) || e == w ||
            (e - w == 1 && *w == 'h'))
            continue;
        char line[160];
        snprintf(line, sizeof line, "\n%.*s\n", (int)(e - w), w);
        ck_assert_msg(
            strstr(names, line) || strncmp(names, line + 1, strlen(line + 1)) == 0,
            "man/shmam-python.7 names shmam.%.*s, which python/shmam does not have",
            (int)(e - w), w);
        seen++;
    }
    ck_assert_msg(seen >= count,
                  "man/shmam-python.7 writes shmam.NAME only %d times for %d names", seen,
                  count);
}
END_TEST

static Suite *man_suite(void)
{
    Suite *s = suite_create("man");
    TCase *tc = tu_tcase(s, "pages", 300);
    tcase_add_test(tc, every_call_has_a_page);
    tcase_add_test(tc, pages_name_only_calls);
    tcase_add_test(tc, pages_render_cleanly);
    tcase_add_test(tc, installed_names_open);
    tcase_add_test(tc, python_names_listed);
    tcase_add_test(tc, python_names_exist);
    return s;
}

int main(void)
{
    tu_run_init("mn");
    return tu_run_suite(man_suite(), "check_man");
}
