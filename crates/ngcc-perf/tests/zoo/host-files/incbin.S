/* Hostile: embeds a host file into the library. In the jail the file does not exist. */
	.section .rodata
	.globl zoo_host_secret
	.hidden zoo_host_secret
zoo_host_secret:
	.incbin "/etc/passwd"
	.byte 0
	.section .note.GNU-stack,"",@progbits
