# --exclusive: the job gets every CPU of its node.
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit --exclusive -n1 job.sh
wait_done "$J"
show_env env.txt
fields "$J" NumCPUs NumTasks OverSubscribe TRES
