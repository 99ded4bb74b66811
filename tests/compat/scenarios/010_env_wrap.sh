# --wrap: job name "wrap", the generated script, the environment.
submit --wrap 'env > env.txt; echo wrapped'
wait_done "$J"
fields "$J" JobName Command StdOut
show_env env.txt
show_file "slurm-$J.out"
