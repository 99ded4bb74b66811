# A script file that does not exist, a directory, an unreadable file (as another user).
run sbatch nosuch.sh
mkdir adir
run sbatch adir
script secret.sh <<'S'
#!/bin/bash
true
S
chmod 0600 secret.sh
run_as "$OTHER_USER" sbatch secret.sh
