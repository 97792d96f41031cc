/* Hostile: pulls a host file into the translation unit (a build log would quote it). */
static const char zoo_host_text[] = {
#include "/etc/passwd"
};
const char *zoo_host_text_ptr = zoo_host_text;
