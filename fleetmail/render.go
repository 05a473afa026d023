package fleetmail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
	gomail "github.com/wneessen/go-mail"
)

// What an e-mail says, for its templates.
type view struct {
	Company     string
	Name        string
	Intro       string
	Items       []itemView
	More        int
	Why         string
	Settings    string // the dashboard's notifications page
	Unsubscribe string
	Report      *fleet.ReportFile
	ReportTitle string
	ReportLink  string
}

type itemView struct {
	When    string
	Title   string
	Vehicle string
	Text    string
	Link    string
}

// clean makes text fit one header line: control characters become
// spaces, runs of spaces one, and it is cut at n runes. The header's
// encoding (RFC 2047) is go-mail's.
func clean(s string, n int) string {
	var b strings.Builder
	space := false
	count := 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		if count >= n {
			b.WriteString("…")
			break
		}
		space = false
		b.WriteRune(r)
		count++
	}
	return strings.TrimSpace(b.String())
}

// eventTitle says what happened, in words.
func eventTitle(it fleet.MailItem) string {
	switch it.Type {
	case fleet.EventAlertCreated:
		if it.AlertType != "" {
			return "Alert: " + strings.ReplaceAll(string(it.AlertType), "_", " ")
		}
		return "Alert"
	case fleet.EventAlertAcknowledged:
		return "Alert acknowledged"
	case fleet.EventAlertResolved:
		return "Alert resolved"
	}
	t := strings.NewReplacer(".", " ", "_", " ").Replace(it.Type)
	return strings.ToUpper(t[:1]) + t[1:]
}

func (s *Sender) link(path string) string {
	if s.opts.PublicURL == "" {
		return ""
	}
	return s.opts.PublicURL + path
}

// Message renders a job's e-mail: plain text and HTML, a link to what it
// is about, the one-click unsubscribe headers (RFC 8058) and, for a report,
// its CSV attached.
func (s *Sender) Message(job fleet.MailJob) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(s.opts.From); err != nil {
		return nil, fmt.Errorf("the sender address: %w", err)
	}
	if err := fleet.CheckRecipient(job.To); err != nil {
		return nil, fmt.Errorf("the recipient address %q %w", job.To, err)
	}
	if err := m.To(job.To); err != nil {
		return nil, err
	}
	v := view{Company: job.Company, Name: job.Name, Settings: s.link("/notifications")}
	if job.UnsubscribeToken != "" && s.opts.PublicURL != "" {
		v.Unsubscribe = s.link("/unsubscribe/" + job.UnsubscribeToken)
		m.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribe, "<"+v.Unsubscribe+">")
		m.SetGenHeaderPreformatted(gomail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	m.SetGenHeaderPreformatted(gomail.Header("Auto-Submitted"), "auto-generated")
	var subject string
	loc := time.UTC
	if job.Rule != nil && job.Rule.QuietHours != nil {
		if l, err := fleet.LoadTZ(job.Rule.QuietHours.TZ); err == nil {
			loc = l
		}
	}
	for _, it := range job.Items {
		iv := itemView{When: it.At.In(loc).Format("2006-01-02 15:04 MST"), Title: eventTitle(it), Text: it.Text, Link: s.link(it.Path)}
		if it.VehicleID != "" {
			iv.Vehicle = job.Vehicles[it.VehicleID]
			if iv.Vehicle == "" {
				iv.Vehicle = it.VehicleID
			}
		}
		v.Items = append(v.Items, iv)
	}
	v.More = job.More
	switch {
	case job.Report != nil:
		r := job.Schedule
		v.ReportTitle = strings.ToUpper(r.Report[:1]) + r.Report[1:] + " report"
		period := job.Report.From.In(mustLoc(r.TZ)).Format("Mon 2 Jan 2006")
		if r.Frequency == fleet.FrequencyWeekly {
			period = "week of " + period
		}
		v.Intro = fmt.Sprintf("Your %s of %s, %d rows, is attached as CSV.", strings.ToLower(v.ReportTitle), period, job.Report.Rows)
		if job.Report.Truncated {
			v.Intro += fmt.Sprintf(" It holds the first %d rows; download the rest from the dashboard.", fleet.MaxReportRows)
		}
		v.Why = "You get this e-mail because of your scheduled report: " + fleet.DescribeReportSchedule(*r) + "."
		v.Report = job.Report
		v.ReportLink = s.link("/vehicles")
		subject = fmt.Sprintf("%s, %s", v.ReportTitle, period)
		m.AttachReader(job.Report.Name, bytes.NewReader(job.Report.CSV),
			gomail.WithFileContentType(gomail.ContentType("text/csv")), gomail.WithFileName(job.Report.Name))
	case job.Digest:
		n := len(job.Items) + job.More
		what := "events"
		if n == 1 {
			what = "event"
		}
		v.Intro = fmt.Sprintf("%d more %s since the last e-mail.", n, what)
		if job.Mail.Phase == fleet.PhaseDigest && !job.Mail.Noticed {
			v.Intro = fmt.Sprintf("%d %s while your notifications were held.", n, what)
		}
		subject = fmt.Sprintf("%d %s: %s", n, what, fleet.DescribeNotificationRule(*job.Rule))
	default:
		if len(v.Items) == 0 {
			return nil, fmt.Errorf("fleetmail: nothing to tell in mail %s", job.Mail.ID)
		}
		it := v.Items[0]
		subject = it.Title
		if it.Vehicle != "" {
			subject += ": " + it.Vehicle
		}
		if it.Text != "" && it.Text != it.Vehicle {
			subject += " — " + it.Text
		}
		v.Intro = "This just happened."
	}
	if job.Rule != nil {
		v.Why = "You get this e-mail because of your notification rule: " + fleet.DescribeNotificationRule(*job.Rule) + "."
	}
	if job.Company != "" {
		subject = "[" + job.Company + "] " + subject
	}
	m.SetGenHeaderPreformatted(gomail.HeaderSubject, encodeHeader(clean(subject, 150)))
	var text, html bytes.Buffer
	if err := textTmpl.Execute(&text, v); err != nil {
		return nil, err
	}
	if err := htmlTmpl.Execute(&html, v); err != nil {
		return nil, err
	}
	m.SetBodyString(gomail.TypeTextPlain, text.String())
	m.AddAlternativeString(gomail.TypeTextHTML, html.String())
	return m, nil
}

// encodeHeader writes text as RFC 2047 encoded words, whatever it holds:
// base64 of UTF-8, at most 45 bytes of text a word (words of 72
// characters), folded one a line. A name a user chose so never reaches a
// header as it is, whatever characters it has.
func encodeHeader(s string) string {
	var words []string
	for len(s) > 0 {
		n := min(len(s), 45)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, "=?UTF-8?B?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, "\r\n ")
}

func mustLoc(tz string) *time.Location {
	if l, err := fleet.LoadTZ(tz); err == nil {
		return l
	}
	return time.UTC
}

var textTmpl = texttemplate.Must(texttemplate.New("text").Parse(`{{if .Name}}Hello {{.Name}},{{else}}Hello,{{end}}

{{.Intro}}
{{range .Items}}
- {{.When}}  {{.Title}}{{if .Vehicle}}  {{.Vehicle}}{{end}}{{if .Text}}
  {{.Text}}{{end}}{{if .Link}}
  {{.Link}}{{end}}
{{end}}{{if .More}}
... and {{.More}} more.
{{end}}{{if .ReportLink}}
{{.ReportLink}}
{{end}}
--
{{.Why}}{{if .Settings}}
Change your notifications: {{.Settings}}{{end}}{{if .Unsubscribe}}
Unsubscribe in one click: {{.Unsubscribe}}{{end}}
{{if .Company}}{{.Company}} on Fleet{{end}}
`))

var htmlTmpl = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>
<body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2933;max-width:640px;margin:0 auto;padding:16px">
<p>{{if .Name}}Hello {{.Name}},{{else}}Hello,{{end}}</p>
<p>{{.Intro}}</p>
{{if .Items}}<table role="presentation" style="border-collapse:collapse;width:100%">
{{range .Items}}<tr style="border-top:1px solid #e4e7eb">
<td style="padding:8px 8px 8px 0;white-space:nowrap;color:#616e7c;vertical-align:top">{{.When}}</td>
<td style="padding:8px 0"><strong>{{.Title}}</strong>{{if .Vehicle}} · {{.Vehicle}}{{end}}{{if .Text}}<br>{{.Text}}{{end}}{{if .Link}}<br><a href="{{.Link}}">Open in Fleet</a>{{end}}</td>
</tr>
{{end}}</table>{{end}}
{{if .More}}<p>… and {{.More}} more.</p>{{end}}
{{if .ReportLink}}<p><a href="{{.ReportLink}}">Open Fleet</a></p>{{end}}
<hr style="border:0;border-top:1px solid #e4e7eb">
<p style="font-size:13px;color:#616e7c">{{.Why}}
{{if .Settings}}<a href="{{.Settings}}">Change your notifications</a>.{{end}}
{{if .Unsubscribe}}<a href="{{.Unsubscribe}}">Unsubscribe in one click</a>.{{end}}</p>
{{if .Company}}<p style="font-size:13px;color:#616e7c">{{.Company}} on Fleet</p>{{end}}
</body></html>
`))
