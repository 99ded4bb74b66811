# --wrap together with a script file; script arguments are passed to the script.
script job.sh <<'S'
#!/bin/bash
echo "args: $# [$1] [$2]"
S
run sbatch --wrap true job.sh
run sbatch -o args.out job.sh "first arg" second
wait_done "$J"
fields "$J" Command
show_outputs
