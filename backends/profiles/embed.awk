# Embeds the profile YAML files named on the command line into C (harness/profile.c reads the
# table): one string per file, named by the file's base name without ".yaml".
BEGIN { n = 0 }
function cname(i) { return "profile_src_" (i + 0) }
FNR == 1 {
    if (n > 0) print ";"
    base = FILENAME; sub(/.*\//, "", base); sub(/\.yaml$/, "", base)
    names[n] = base
    printf "static const char %s[] = \"\"", cname(n)
    n++
}
{
    line = $0
    gsub(/\\/, "\\\\", line); gsub(/"/, "\\\"", line); gsub(/\t/, "\\t", line)
    printf "\n    \"%s\\n\"", line
}
END {
    if (n > 0) print ";"
    print "typedef struct hc_profile_src { const char *name; const char *text; unsigned long len; } hc_profile_src;"
    print "extern const hc_profile_src hc_profile_builtin_srcs[];"
    print "extern const char *const hc_profile_builtin_name_list[];"
    print "const hc_profile_src hc_profile_builtin_srcs[] = {"
    for (i = 0; i < n; i++) printf "    {\"%s\", %s, sizeof %s - 1},\n", names[i], cname(i), cname(i)
    print "    {0, 0, 0},\n};"
    print "const char *const hc_profile_builtin_name_list[] = {"
    for (i = 0; i < n; i++) printf "    \"%s\",\n", names[i]
    print "    0,\n};"
}
