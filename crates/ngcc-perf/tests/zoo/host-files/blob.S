/* Honest control: a data symbol of the candidate's own, assembled like the hostile ones. */
	.section .rodata
	.globl zoo_host_blob
	.hidden zoo_host_blob
zoo_host_blob:
	.byte 1, 2, 3, 4
	.section .note.GNU-stack,"",@progbits
