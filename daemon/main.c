/* dsightd: the warm-session server (in development). */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("dsightd: not available in this build yet\n", stderr);
	return 1;
}
