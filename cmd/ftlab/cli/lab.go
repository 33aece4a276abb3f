package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/teaching"
	"github.com/ftlab/ftlab/orchestrator/teaching/session"
)

// labFlags are the flags the lab subcommands share.
type labFlags struct {
	labsDir, student string
}

func (a *app) labCommand() *cobra.Command {
	var lf labFlags
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Teaching labs: handouts, steps, automatic checks and grading",
		Long: `A teaching lab is a directory under labs/: a handout (README.md), steps with the
commands to run, checks that say what is right and what is not, and an answers
file to fill in. Each student's name seeds their own variant (hidden faults,
chosen hosts, workloads). See docs/labs.md.

  ftlab lab list                            the labs
  ftlab lab show fattree                    goals, steps, checks and points
  ftlab lab start fattree --student alice   bring up alice's lab; a workspace to hand in
  ftlab lab run                             run the current step's scenario
  ftlab lab check [--all]                   check the current step (or all), write the report
  ftlab lab reset | stop                    back to step 1 | take the lab down
  ftlab lab grade submissions/              the instructor's table over many workspaces`,
	}
	cmd.PersistentFlags().StringVar(&lf.labsDir, "labs", "labs", "directory holding the labs")
	cmd.PersistentFlags().StringVar(&lf.student, "student", os.Getenv("FTLAB_STUDENT"), "student name (seeds the variant); default $FTLAB_STUDENT")
	cmd.AddCommand(a.labListCommand(&lf), a.labShowCommand(&lf), a.labStartCommand(&lf), a.labRunCommand(&lf),
		a.labCheckCommand(&lf), a.labResetCommand(&lf), a.labStopCommand(&lf), a.labGradeCommand(&lf))
	return cmd
}

// features says which optional ftlab features this build has, from its
// commands.
func features(cmd *cobra.Command) map[string]bool {
	f := map[string]bool{}
	for _, c := range cmd.Root().Commands() {
		f[c.Name()] = true
	}
	out := map[string]bool{}
	for _, name := range teaching.Features {
		out[name] = f[name]
	}
	return out
}

func (a *app) manager(cmd *cobra.Command, lf *labFlags) *session.Manager {
	b := Build()
	return &session.Manager{Store: a.store, LabsDir: lf.labsDir, Agents: agentStarter, Version: b.Version, Commit: b.Commit, Features: features(cmd)}
}

func (a *app) labListCommand(lf *labFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the labs and whether each one loads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			labs, err := teaching.List(lf.labsDir)
			if asJSON {
				// What the table shows: not the checks, which hold the answers.
				type entry struct {
					ID     string `json:"id"`
					Title  string `json:"title"`
					Steps  int    `json:"steps"`
					Points int    `json:"points"`
					Time   string `json:"time,omitempty"`
				}
				out := []entry{}
				for _, l := range labs {
					out = append(out, entry{l.ID, l.Title, len(l.Steps), l.Points, l.Time})
				}
				if jerr := a.printJSON(out); jerr != nil {
					return jerr
				}
				return err
			}
			w := newTable(a.stdout)
			fmt.Fprintln(w, "LAB\tSTEPS\tPOINTS\tTIME\tTITLE")
			for _, l := range labs {
				fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\n", l.ID, len(l.Steps), l.Points, l.Time, l.Title)
			}
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func (a *app) labShowCommand(lf *labFlags) *cobra.Command {
	var handout bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a lab's goals, steps and checks (--handout: the handout itself)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := teaching.Load(filepath.Join(lf.labsDir, args[0]))
			if err != nil {
				return err
			}
			if handout {
				data, err := os.ReadFile(filepath.Join(l.Dir, teaching.HandoutFile))
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(data)
				return err
			}
			var facts *teaching.Facts
			if lf.student != "" {
				facts = l.Draw(lf.student)
			}
			a.printLab(l, facts, features(cmd))
			return nil
		},
	}
	cmd.Flags().BoolVar(&handout, "handout", false, "print the handout (README.md)")
	return cmd
}

func (a *app) printLab(l *teaching.Lab, facts *teaching.Facts, have map[string]bool) {
	w := a.stdout
	fmt.Fprintf(w, "%s: %s (%d points", l.ID, l.Title, l.Points)
	if l.Time != "" {
		fmt.Fprintf(w, ", about %s", l.Time)
	}
	fmt.Fprintf(w, ")\n%s\n\nhandout: %s\n\nGoals\n", l.Summary, filepath.Join(l.Dir, teaching.HandoutFile))
	for _, g := range l.Goals {
		fmt.Fprintf(w, "  - %s\n", g)
	}
	if facts != nil && len(facts.Picks) > 0 {
		fmt.Fprintf(w, "\nVariant of %s (seed %d)\n", facts.Student, facts.Seed)
		for _, p := range l.Variant.Picks {
			fmt.Fprintf(w, "  %s: %s\n", p.Name, facts.Picks[p.Name])
		}
	}
	for i, s := range l.Steps {
		fmt.Fprintf(w, "\nStep %d/%d %s: %s (%d points)\n", i+1, len(l.Steps), s.ID, s.Title, s.Points)
		for _, c := range s.Checks {
			note := ""
			var missing []string
			for _, f := range c.Requires {
				if !have[f] {
					missing = append(missing, f)
				}
			}
			if len(missing) > 0 {
				note = " (skipped: needs ftlab " + strings.Join(missing, ", ") + ")"
			}
			fmt.Fprintf(w, "  [p%d %2d pts] %-22s %s%s\n", c.Priority, c.Points, c.ID, c.Description, note)
		}
	}
}

// printStep tells the student what to do in a step.
func printStep(w io.Writer, act *session.Active, i int) {
	l, s := act.Lab, act.Lab.Steps[i]
	fmt.Fprintf(w, "\nstep %d/%d %s: %s\n", i+1, len(l.Steps), s.ID, s.Title)
	for _, c := range s.Do {
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(act.Facts.Expand(act.Session.LabName, c), "{workspace}", act.Session.Workspace))
	}
	fmt.Fprintf(w, "  then answer the step's questions in %s and run: ftlab lab check\n",
		filepath.Join(act.Session.Workspace, teaching.AnswersFile))
}

func (a *app) labStartCommand(lf *labFlags) *cobra.Command {
	var opt session.Options
	cmd := &cobra.Command{
		Use:         "start ID",
		Short:       "Bring up a student's lab and workspace",
		Args:        cobra.ExactArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.Student = lf.student
			act, err := a.manager(cmd, lf).Start(cmd.Context(), args[0], opt)
			if err != nil {
				return err
			}
			s := act.Session
			fmt.Fprintf(a.stdout, "lab %s is up for %s (seed %d): %s\n", s.LabName, s.Student, s.Seed, act.Lab.Topo)
			fmt.Fprintf(a.stdout, "  handout:   %s\n  workspace: %s (fill in %s; hand in the whole folder)\n",
				filepath.Join(act.Lab.Dir, teaching.HandoutFile), s.Workspace, teaching.AnswersFile)
			for _, p := range act.Lab.Variant.Picks {
				fmt.Fprintf(a.stdout, "  your %s: %s\n", p.Name, act.Facts.Picks[p.Name])
			}
			fmt.Fprintf(a.stdout, "  export LAB=%s   # the handout's commands say -n $LAB\n", s.LabName)
			if s.Step > 0 {
				fmt.Fprintf(a.stdout, "  resuming the workspace at step %d (ftlab lab reset starts over)\n", s.Step+1)
			}
			printStep(a.stdout, act, s.Step)
			return nil
		},
	}
	cmd.Flags().StringVar(&opt.Workspace, "workspace", "", "the student's workspace (default ./ID-STUDENT)")
	cmd.Flags().StringVarP(&opt.Name, "name", "n", "", "the ftlab lab's name (default from the lab id and student)")
	return cmd
}

// find returns the running session the arguments name.
func (a *app) find(cmd *cobra.Command, lf *labFlags, args []string) (*session.Manager, *session.Active, error) {
	m := a.manager(cmd, lf)
	id := ""
	if len(args) > 0 {
		id = args[0]
	}
	act, err := m.Find(id, lf.student)
	return m, act, err
}

func (a *app) labRunCommand(lf *labFlags) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:         "run [STEP]",
		Short:       "Run a step's scenario on the student's lab (default: the current step)",
		Args:        cobra.MaximumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, act, err := a.find(cmd, lf, optional(id))
			if err != nil {
				return err
			}
			step := ""
			if len(args) > 0 {
				step = args[0]
			}
			res, err := m.RunStep(cmd.Context(), act, step)
			if res != nil {
				switch res.Mode {
				case teaching.RunTraffic:
					fmt.Fprintf(a.stdout, "step %s: %d/%d messages delivered in %.2f s; counters were zeroed first: ftlab stats -n %s --ports\n",
						res.Step, res.Delivered, res.Messages, res.Elapsed.Seconds(), act.Session.LabName)
				default:
					if res.Run != nil {
						fmt.Fprintf(a.stdout, "step %s: results in %s (%.1f s), fidelity %s\n", res.Step, res.Dir, res.Elapsed.Seconds(), res.Run.Verdict)
						for _, why := range res.Run.Reasons {
							fmt.Fprintf(a.stdout, "  %s\n", why)
						}
						if res.Run.Verdict != "OK" {
							fmt.Fprintln(a.stdout, "  checks reading this run will be INCONCLUSIVE: rerun when the machine is quieter")
						}
					}
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&id, "lab", "", "which lab, when several are running")
	return cmd
}

func optional(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

var statusWord = map[teaching.Status]string{teaching.Pass: "PASS", teaching.Fail: "FAIL", teaching.Inconclusive: "INCONCLUSIVE", teaching.Skipped: "SKIPPED"}

func (a *app) labCheckCommand(lf *labFlags) *cobra.Command {
	var step string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "check [ID]",
		Short: "Check the current step (or --step, or --all) and write report.md, results.json, junit.xml",
		Long: `check evaluates the checks of the current step against your running lab, your runs
and your answers.yaml, prints what passed and what did not (with hints), and writes
report.md, results.json and junit.xml in your workspace. When every priority-1
check of the current step passes, you move on to the next step. Exit status 3 if a
check failed.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, act, err := a.find(cmd, lf, args)
			if err != nil {
				return err
			}
			res, err := m.Check(cmd.Context(), act, step, all)
			if err != nil {
				return err
			}
			if asJSON {
				if err := a.printJSON(res.Report.ForStudent()); err != nil {
					return err
				}
			} else {
				a.printResults(res, act)
			}
			for _, r := range res.Checked {
				if r.Status == teaching.Fail {
					return exitError{code: 3}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&step, "step", "", "check this step instead of the current one")
	cmd.Flags().BoolVar(&all, "all", false, "check every step (do this before handing in)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print results.json")
	return cmd
}

func (a *app) printResults(res *session.CheckResult, act *session.Active) {
	w := a.stdout
	for _, r := range res.Checked {
		fmt.Fprintf(w, "%-12s %-24s %4s/%-3d %s\n", statusWord[r.Status], r.Check, trimFloat(r.Earned), r.Points, r.Description)
		if r.Observed != "" && r.Status != teaching.Pass {
			fmt.Fprintf(w, "             saw: %s\n", r.Observed)
		}
		if r.Reason != "" {
			fmt.Fprintf(w, "             why: %s\n", r.Reason)
		}
		if r.Hint != "" {
			fmt.Fprintf(w, "             hint: %s\n", r.Hint)
		}
	}
	rep := res.Report
	for _, p := range rep.AnswerProblems {
		fmt.Fprintf(w, "answers.yaml: %s\n", p)
	}
	fmt.Fprintf(w, "\nscore %s of %s points checked (lab: %d); report: %s\n", trimFloat(rep.Earned), trimFloat(rep.Possible), rep.Total,
		filepath.Join(act.Session.Workspace, teaching.ReportFile))
	switch {
	case res.Advanced:
		fmt.Fprintf(w, "step %s done.\n", res.Step)
		printStep(w, act, act.Session.Step)
	case res.Step != "" && res.Done:
		fmt.Fprintf(w, "step %s done.\n", res.Step)
	case res.Step != "":
		fmt.Fprintf(w, "step %s not done yet: its priority-1 checks must pass.\n", res.Step)
	}
}

func trimFloat(x float64) string {
	if x == float64(int64(x)) {
		return fmt.Sprint(int64(x))
	}
	return fmt.Sprintf("%.1f", x)
}

func (a *app) labResetCommand(lf *labFlags) *cobra.Command {
	return &cobra.Command{
		Use:         "reset [ID]",
		Short:       "Take the student's lab down and bring it back at step 1 (answers are kept)",
		Args:        cobra.MaximumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, act, err := a.find(cmd, lf, args)
			if err != nil {
				return err
			}
			if err := m.Reset(cmd.Context(), act); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "lab %s is back at step 1 (answers kept in %s)\n", act.Session.LabName, act.Session.Workspace)
			printStep(a.stdout, act, 0)
			return nil
		},
	}
}

func (a *app) labStopCommand(lf *labFlags) *cobra.Command {
	return &cobra.Command{
		Use:         "stop [ID]",
		Short:       "Take the student's lab down; the workspace stays, to hand in",
		Args:        cobra.MaximumNArgs(1),
		Annotations: rootOnly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, act, err := a.find(cmd, lf, args)
			if err != nil {
				return err
			}
			if err := m.Stop(act); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "lab %s is down; hand in %s\n", act.Session.LabName, act.Session.Workspace)
			return nil
		},
	}
}

func (a *app) labGradeCommand(lf *labFlags) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "grade DIR...",
		Short: "Grade submitted workspaces: a table per student and per check",
		Long: `grade reads each DIR as a student's workspace (it holds session.json) or as a
folder of workspaces, judges answers and runs again from the submitted files
(expected answers come from each student's seed), keeps the live checks' outcomes
the student's last ftlab lab check recorded, and writes grades.md, grades.csv,
grades.json and one report per student (with the expected answers) to --out.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			subs, err := teaching.FindSubmissions(args)
			if err != nil {
				return err
			}
			g, err := teaching.Grade(cmd.Context(), lf.labsDir, subs, features(cmd))
			if err != nil {
				return err
			}
			if out == "" {
				out = "grades"
			}
			if err := g.WriteFiles(out); err != nil {
				return err
			}
			fmt.Fprint(a.stdout, g.Markdown())
			fmt.Fprintf(a.stdout, "\nwritten: %s\n", filepath.Join(out, teaching.GradesMarkdown))
			if len(g.Problems) > 0 {
				return exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "grades", "directory for grades.md, grades.csv, grades.json and the reports")
	return cmd
}
