package analysis

import "slices"

// maxWaitingMRTR bounds the MRTR operations of one key (scope, direction,
// method and tool, prompt or resource) waiting for a retry: past it, the
// oldest is given up (abandoned).
const maxWaitingMRTR = 16

// waitingOps holds the MRTR operations waiting for a retry, by key, the
// latest last. Retries carry no id of their operation: one comes for the
// latest operation of its key. An operation started before another of
// its key and not retried stays waiting (the client may retry it yet, or
// never: abandoned at the end), up to maxWaitingMRTR of them. The
// Inspector and the OTLP exporter both follow operations with it.
type waitingOps[T comparable] map[opKey][]T

// wait adds op under k and returns the oldest operation of k, no longer
// waiting, when k held too many (ok).
func (w waitingOps[T]) wait(k opKey, op T) (oldest T, ok bool) {
	l := append(w[k], op)
	if len(l) > maxWaitingMRTR {
		oldest, ok = l[0], true
		l = slices.Delete(l, 0, 1)
	}
	w[k] = l
	return oldest, ok
}

// latest returns the operation a retry under k continues, the latest
// waiting; ok is false when none waits.
func (w waitingOps[T]) latest(k opKey) (op T, ok bool) {
	if l := w[k]; len(l) > 0 {
		return l[len(l)-1], true
	}
	return op, false
}

// done stops the wait of op under k.
func (w waitingOps[T]) done(k opKey, op T) {
	l := w[k]
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] == op {
			l = slices.Delete(l, i, i+1)
			break
		}
	}
	if len(l) == 0 {
		delete(w, k)
		return
	}
	w[k] = l
}

// waitRetry keeps the MRTR operation op, whose last answer asked for
// input, waiting for its retry under k; the oldest of k, past
// maxWaitingMRTR, is abandoned at once.
func (in *Inspector) waitRetry(k opKey, op *operation) {
	if oldest, ok := in.mrtr.wait(k, op); ok {
		in.abandoned = append(in.abandoned, in.abandon(oldest))
		in.abandoned = in.abandoned[:min(len(in.abandoned), in.o.maxListed)]
	}
}

// retried returns the MRTR operation a retry under k continues (the
// latest one waiting) and stops its wait, or nil when none waits.
func (in *Inspector) retried(k opKey) *operation {
	op, ok := in.mrtr.latest(k)
	if ok {
		in.mrtr.done(k, op)
	}
	return op
}

// abandon counts the MRTR operation op abandoned (never retried), in the
// tape and in its session, keeps it in the session's details, hands it to
// the WithOperations function and returns its first round's request.
func (in *Inspector) abandon(op *operation) RequestRef {
	in.rep.Operations.MRTR.Abandoned++
	op.sess.abandoned++
	r := RequestRef{Session: op.sess.id, Dir: string(op.dir), ID: clip(op.id.String(), 60), Method: op.method,
		Name: clip(op.name, 60), Seq: op.seq, OffsetNS: op.start - in.origin}
	keepDetail(in, op.sess, abandonedDetails, func() RequestRef { return r })
	in.emitAbandoned(op)
	return r
}
