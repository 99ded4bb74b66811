# srun --task-prolog/--task-epilog: the prolog runs before each task, as its user with its
# environment; what it prints as "export NAME=VALUE", "unset NAME" and "print TEXT" changes
# the task's environment or goes to its output; other lines are ignored. A prolog that fails,
# or cannot be run, ends the task with Slurm's lines. The epilog runs after each task, with
# the task's environment as it was before the prolog, and its output is not the task's.
# Lines sorted where the node's and srun's own lines come in no fixed order.
script prolog.sh <<'S'
#!/bin/bash
echo "export FOO=bar baz"
echo "print hello from prolog $SLURM_PROCID"
echo "unset HOME"
echo "garbage line"
echo "export  SPACED=1"
echo "print"
echo "to stderr" >&2
S
script bad.sh <<'S'
#!/bin/bash
echo "print before fail"
exit 3
S
script epilog.sh <<'S'
#!/bin/bash
echo "epilog $SLURM_PROCID FOO=$FOO" >> "$SLURM_SUBMIT_DIR/epi.log"
echo "epilog stdout"
S
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run_sorted srun -N2 -n2 --task-prolog="$PWD/prolog.sh" --task-epilog="$PWD/epilog.sh" bash -c 'echo "FOO=$FOO HOME=${HOME-unset} SPACED=${SPACED-unset} $SLURM_PROCID"'
wait_queue_empty
run sort epi.log
run_sorted srun --task-prolog="$PWD/bad.sh" echo ran
wait_queue_empty
run_sorted srun -N2 -n2 --task-prolog="$PWD/nonexist" echo ran
wait_queue_empty
run_sorted srun --task-prolog=prolog.sh echo ran
wait_queue_empty
run env SLURM_TASK_PROLOG="$PWD/prolog.sh" srun bash -c 'echo "FOO=$FOO"'
wait_queue_empty
