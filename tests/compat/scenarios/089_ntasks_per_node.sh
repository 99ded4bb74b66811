# --ntasks-per-node with -N: task counts in scontrol and the environment.
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit -N 2 --ntasks-per-node=2 job.sh
wait_done "$J"
fields "$J" NumNodes NumCPUs NumTasks NtasksPerN:B:S:C
show_env env.txt
