package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
)

const userUsage = "usage: incidentlib user add NAME --role reader|submitter|reviewer|admin|maintainer [--team TEAM] [--store URL]\n       incidentlib user disable NAME [--store URL]   (revokes every token and session it holds)"

// runUser is `incidentlib user add NAME --role ROLE [--team TEAM]` and
// `incidentlib user disable NAME`.
func (m *Main) runUser(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "disable" {
		return m.runUserDisable(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "add" {
		fmt.Fprintln(m.Stderr, userUsage)
		return exitUsage
	}
	fs := newFlagSet("user add", m.Stderr)
	var url, team, role string
	storeFlag(fs, &url)
	fs.StringVar(&team, "team", "", "the team whose private cases the account sees and writes")
	fs.StringVar(&role, "role", "", "reader, submitter, reviewer, admin or maintainer")
	name, rest := leadingArg(args[1:])
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if name == "" || role == "" || url == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, userUsage)
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "user add", url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	a, err := st.AddAccount(ctx, name, team, incidentlib.Role(role))
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib user add: %s\n", incidentlib.ErrorMessage(err))
		if incidentlib.ErrorCode(err) == incidentlib.EINVALID {
			return exitUsage
		}
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: account %s (%s%s)\n", a.Name, a.Role, map[bool]string{true: ", team " + a.Team, false: ""}[a.Team != ""])
	return exitOK
}

// runToken is `incidentlib token create NAME` and `incidentlib token revoke`.
func (m *Main) runToken(ctx context.Context, args []string) int {
	const usage = "usage: incidentlib token create NAME [--ttl 90d] [--label TEXT] [--store URL]\n       incidentlib token revoke [--store URL]   (reads the token from standard input)"
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke") {
		fmt.Fprintln(m.Stderr, usage)
		return exitUsage
	}
	verb := args[0]
	fs := newFlagSet("token "+verb, m.Stderr)
	var url, label, ttl string
	storeFlag(fs, &url)
	fs.StringVar(&label, "label", "", "what the token is for (shown in the audit log)")
	fs.StringVar(&ttl, "ttl", "90d", "how long the token works: hours (12h) or days (30d)")
	name, rest := "", args[1:]
	if verb == "create" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if url == "" || fs.NArg() > 0 || (verb == "create" && name == "") {
		fmt.Fprintln(m.Stderr, usage)
		return exitUsage
	}
	life, err := parseTTL(ttl)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib token: --ttl %q: %v\n", ttl, err)
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "token "+verb, url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	if verb == "create" {
		tok, exp, err := st.CreateToken(ctx, name, "api", label, life)
		if err != nil {
			fmt.Fprintf(m.Stderr, "incidentlib token create: %s\n", incidentlib.ErrorMessage(err))
			return exitProblems
		}
		// The token alone on standard output, so scripts can capture it;
		// it is shown this once.
		fmt.Fprintln(m.Stdout, tok)
		fmt.Fprintf(m.Stderr, "ok: token for %s, valid until %s; it is not stored and cannot be shown again\n", name, exp.Format(time.RFC3339))
		return exitOK
	}
	var tok string
	fmt.Fscan(m.Stdin, &tok)
	ok, err := st.RevokeToken(ctx, strings.TrimSpace(tok))
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib token revoke: %s\n", incidentlib.ErrorMessage(err))
		return exitProblems
	}
	if !ok {
		fmt.Fprintln(m.Stderr, "incidentlib token revoke: no such token, or it was revoked already")
		return exitProblems
	}
	fmt.Fprintln(m.Stderr, "ok: token revoked")
	return exitOK
}

// parseTTL reads "12h" or "30d".
func parseTTL(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err != nil || days <= 0 || days > 3650 {
			return 0, fmt.Errorf("want a number of days from 1 to 3650")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("want hours (12h) or days (30d), at least a minute")
	}
	return d, nil
}

// runUserDisable is `incidentlib user disable NAME`: the account can no
// longer sign in, and every token and session it holds ends at once.
func (m *Main) runUserDisable(ctx context.Context, args []string) int {
	fs := newFlagSet("user disable", m.Stderr)
	var url, actor string
	storeFlag(fs, &url)
	fs.StringVar(&actor, "as", "admin", "who the audit log names as disabling it")
	name, rest := leadingArg(args)
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if name == "" || url == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, userUsage)
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "user disable", url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	n, err := st.DisableAccount(ctx, name, actor)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib user disable: %s\n", incidentlib.ErrorMessage(err))
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: account %s disabled; %d tokens and sessions revoked\n", name, n)
	return exitOK
}

// runWithdraw is `incidentlib withdraw CASE --reason TEXT` (also spelled
// unpublish): a maintainer takes a published case out of the library;
// every replica drops it at once. Its versions stay until purge.
func (m *Main) runWithdraw(ctx context.Context, args []string) int {
	const usage = "usage: incidentlib withdraw CASE --reason TEXT [--as NAME] [--store URL]"
	fs := newFlagSet("withdraw", m.Stderr)
	var url, actor, reason string
	storeFlag(fs, &url)
	fs.StringVar(&reason, "reason", "", "why (kept in the audit log)")
	fs.StringVar(&actor, "as", "maintainer", "who the audit log names as withdrawing it")
	id, rest := leadingArg(args)
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if id == "" || url == "" || strings.TrimSpace(reason) == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, usage)
		return exitUsage
	}
	norm, ok := incidentlib.NormalizeCaseID(id)
	if !ok {
		fmt.Fprintf(m.Stderr, "incidentlib withdraw: %q is not a case ID (IL-NNNN)\n", id)
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "withdraw", url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	if err := st.Withdraw(ctx, norm, actor, reason); err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib withdraw: %s\n", incidentlib.ErrorMessage(err))
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: %s withdrawn; replicas drop it within a second. Its old versions stay until: incidentlib purge %s\n", norm, norm)
	return exitOK
}

// runPurge is `incidentlib purge CASE`: the case's old versions (and the
// drafts that held them) are deleted; for a withdrawn case, all its text.
func (m *Main) runPurge(ctx context.Context, args []string) int {
	const usage = "usage: incidentlib purge CASE [--as NAME] [--store URL]\n\nDeletes every version of CASE but the one served, and the text of the drafts\nthat published them; for a withdrawn case, all of its text. It cannot be undone."
	fs := newFlagSet("purge", m.Stderr)
	var url, actor string
	storeFlag(fs, &url)
	fs.StringVar(&actor, "as", "maintainer", "who the audit log names as purging it")
	id, rest := leadingArg(args)
	if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	if id == "" || url == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, usage)
		return exitUsage
	}
	norm, ok := incidentlib.NormalizeCaseID(id)
	if !ok {
		fmt.Fprintf(m.Stderr, "incidentlib purge: %q is not a case ID (IL-NNNN)\n", id)
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "purge", url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	res, err := st.Purge(ctx, norm, actor)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib purge: %s\n", incidentlib.ErrorMessage(err))
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: %s: %d old versions deleted, %d drafts emptied%s\n", norm, res.Versions, res.Drafts,
		map[bool]string{true: ", the withdrawn case's text removed", false: ""}[res.Case])
	return exitOK
}

// leadingArg splits off a command's first argument when it is not a flag
// (`incidentlib purge IL-0042 --as NAME`), so that flags may follow it.
func leadingArg(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}
