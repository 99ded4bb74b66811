# srun's output and exit status (standalone, lines sorted: tasks on several nodes write in no
# fixed order): -l labels (width of the largest task id), an unterminated last line, stdin
# (default: every task; -i 0, -i none), -o/-e file patterns (%t %n %N %j %s %u %x), exit
# codes (0, 3, mixed, signals: 128+signal wins over any exit code; exit codes stay below 100,
# the lowest job id), the "srun: error:
# node1: tasks 0-1: ..." lines, -K, a command that does not exist, --multi-prog.
# Each srun waits for an empty queue first (see 098).
run_sorted srun -N2 -n3 -l bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'
wait_queue_empty
run_sorted srun -N2 -n3 bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'
wait_queue_empty
run_sorted srun -N3 -n12 -O -l echo hi
wait_queue_empty
run srun -n1 -l printf 'no newline'
wait_queue_empty
run srun -n1 printf 'no newline'
wait_queue_empty
# stdin
file in.txt <<'S'
line one
line two
S
note "the next three sruns read in.txt on their stdin"
run_sorted srun -N2 -n3 -l bash -c 'cat; echo "eof $SLURM_PROCID"' <in.txt
wait_queue_empty
run_sorted srun -N2 -n3 -l -i 0 bash -c 'cat; echo "eof $SLURM_PROCID"' <in.txt
wait_queue_empty
run_sorted srun -N2 -n3 -l -i none bash -c 'cat; echo "eof $SLURM_PROCID"' <in.txt
wait_queue_empty
run_sorted srun -N2 -n3 -l -i in.txt bash -c 'cat; echo "eof $SLURM_PROCID"'
wait_queue_empty
# output files: one per task with %t, shared otherwise; -e alone leaves stdout on srun's
run_sorted srun -N2 -n3 -o 'o-%j-%s-%t-%n-%N-%u-%x.txt' -e 'e-%t.txt' bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'
wait_queue_empty
run_sorted srun -N2 -n3 -l -o shared.txt bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'
wait_queue_empty
run_sorted srun -N2 -n2 -e 'err-%t.txt' bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'
wait_queue_empty
# the tasks' lines reach shared.txt in no fixed order
run sort shared.txt
rm -f shared.txt
show_outputs
# exit codes
run_sorted srun -N2 -n4 true
wait_queue_empty
run_sorted srun -N2 -n4 bash -c 'exit 3'
wait_queue_empty
run_sorted srun -N2 -n4 bash -c '[ $SLURM_PROCID = 1 ] && exit 3; [ $SLURM_PROCID = 3 ] && exit 5; exit 0'
wait_queue_empty
run_sorted srun -N2 -n2 bash -c '[ $SLURM_PROCID = 0 ] && exit 42; sleep 1; kill -HUP $$'
wait_queue_empty
run_sorted srun -N2 -n2 bash -c '[ $SLURM_PROCID = 0 ] && kill -SEGV $$; sleep 1; kill -HUP $$'
wait_queue_empty
run_sorted srun -n1 bash -c 'kill -9 $$'
wait_queue_empty
run_sorted srun -n1 bash -c 'kill -TERM $$'
wait_queue_empty
run_sorted srun -n1 bash -c 'kill -USR1 $$'
wait_queue_empty
# the state of the job srun made when a task failed
run_sorted srun -N2 -n2 bash -c 'echo $SLURM_JOB_ID; [ $SLURM_PROCID = 1 ] && exit 3; exit 0'
J=$(head -n 1 <<<"$OUT")
wait_done "$J"
fields "$J" JobState Reason ExitCode
run_sorted srun -N2 -n2 bash -c 'echo $SLURM_JOB_ID; [ $SLURM_PROCID = 1 ] && kill -9 $$; exit 0'
J=$(head -n 1 <<<"$OUT")
wait_done "$J"
fields "$J" JobState Reason ExitCode
run_sorted srun -N2 -n2 -K bash -c '[ $SLURM_PROCID = 0 ] && exit 3; sleep 20'
wait_queue_empty
run_sorted srun -N2 -n3 no-such-command-xyz
wait_queue_empty
run_sorted srun -N2 -n3 ./no-such-file
wait_queue_empty
run_sorted srun -n1 /etc/passwd
wait_queue_empty
# --multi-prog
file mp.conf <<'S'
# a comment
0      echo zero %t %o
1-2    echo range task=%t offset=%o
3,5    echo list %t %o
4      bash -c 'echo quoted $SLURM_PROCID'
*      echo star %t %o
S
run_sorted srun -N3 -n8 -O -l --multi-prog mp.conf
wait_queue_empty
file short.conf <<'S'
0 echo a
S
run_sorted srun -n2 --multi-prog short.conf
file dup.conf <<'S'
0-1 echo a
1 echo b
S
run_sorted srun -n2 --multi-prog dup.conf
file over.conf <<'S'
0-5 echo a
S
run_sorted srun -n2 --multi-prog over.conf
run_sorted srun -n2 --multi-prog no-such.conf
wait_queue_empty
# client-side errors
run srun
run srun --bogus-option true
run srun -n 0 true
run srun -t bogus true
run srun -p nosuch true
run srun -c 3 true
wait_queue_empty
