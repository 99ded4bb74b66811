# The batch environment of -N1 -n2 (two tasks on one node).
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit -N1 -n2 job.sh
wait_done "$J"
show_env env.txt
