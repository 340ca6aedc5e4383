package analysis

// maxWaitingMRTR bounds the MRTR operations of one key (session,
// direction, method and tool, prompt or resource) waiting for a retry:
// past it, the oldest is abandoned.
const maxWaitingMRTR = 16

// waitRetry keeps the MRTR operation op, whose last answer asked for
// input, waiting for its retry under k. Retries carry no id of their
// operation: one comes for the latest operation of its key (retried).
// An operation of the key started before op and not retried stays
// waiting (the client may retry it yet, or never: abandoned at the end),
// up to maxWaitingMRTR of them.
func (in *Inspector) waitRetry(k opKey, op *operation) {
	l := append(in.mrtr[k], op)
	if len(l) > maxWaitingMRTR {
		in.abandoned = append(in.abandoned, in.abandon(l[0]))
		in.abandoned = in.abandoned[:min(len(in.abandoned), in.o.maxListed)]
		l = append(l[:0], l[1:]...)
	}
	in.mrtr[k] = l
}

// retried returns the MRTR operation a retry under k continues (the
// latest one waiting) and stops its wait, or nil when none waits.
func (in *Inspector) retried(k opKey) *operation {
	l := in.mrtr[k]
	if len(l) == 0 {
		return nil
	}
	op := l[len(l)-1]
	if len(l) == 1 {
		delete(in.mrtr, k)
	} else {
		l[len(l)-1] = nil
		in.mrtr[k] = l[:len(l)-1]
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
