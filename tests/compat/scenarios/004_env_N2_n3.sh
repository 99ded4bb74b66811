# The batch environment of -N2 -n3: SLURM_TASKS_PER_NODE=2,1, node list node[1-2].
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit -N2 -n3 job.sh
wait_done "$J"
show_env env.txt
fields "$J" JobState NodeList BatchHost NumNodes NumCPUs NumTasks
