/* Hostile probe: asks the preprocessor whether host files exist. In the jail every answer is
 * "absent", so this builds; outside it the #error would fire. */
#if __has_include("/etc/passwd") || __has_include(</etc/hostname>) || __has_include(</root/.bashrc>)
#error "a host file outside the candidate's folder is visible to the compiler"
#endif
int zoo_host_probe_done;
