package dashboard_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/localstack/gateway"
)

// tpl is template.yaml as YAML nodes, with the helpers that reading it
// needs.
type tpl struct{ *yaml.Node }

func readTemplate(t *testing.T) tpl {
	t.Helper()
	b, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return tpl{doc.Content[0]}
}

// at follows mapping keys; a missing one gives a nil node.
func (n tpl) at(path ...string) tpl {
	cur := n.Node
	for _, k := range path {
		var next *yaml.Node
		for i := 0; cur != nil && cur.Kind == yaml.MappingNode && i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				next = cur.Content[i+1]
			}
		}
		cur = next
	}
	return tpl{cur}
}

// canon writes a node, intrinsic tags included, as one string, so that two
// expressions can be compared.
func (n tpl) canon() string {
	if n.Node == nil {
		return "<none>"
	}
	tag := ""
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		tag = n.Tag + " "
	}
	if n.Kind == yaml.ScalarNode {
		return tag + n.Value
	}
	var parts []string
	for _, c := range n.Content {
		parts = append(parts, tpl{c}.canon())
	}
	return tag + "[" + strings.Join(parts, ", ") + "]"
}

// TestTemplateHeaders: the CloudFront distribution sends the headers that
// make run sends (internal/dashboard.Headers), every one overriding the
// origin's, and HSTS; the CSP's connect-src is the region's API Gateway
// domain (index.html narrows it to the API: TestSite).
func TestTemplateHeaders(t *testing.T) {
	sec := readTemplate(t).at("Resources", "DashboardHeaders", "Properties", "ResponseHeadersPolicyConfig", "SecurityHeadersConfig")
	got := map[string]string{
		"Content-Security-Policy": sec.at("ContentSecurityPolicy", "ContentSecurityPolicy").Value,
		"X-Frame-Options":         sec.at("FrameOptions", "FrameOption").Value,
		"Referrer-Policy":         sec.at("ReferrerPolicy", "ReferrerPolicy").Value,
	}
	if sec.at("ContentTypeOptions").Node != nil {
		got["X-Content-Type-Options"] = "nosniff" // the only value CloudFront sends
	}
	want := dashboard.Headers("'self' https://*.execute-api.${AWS::Region}.amazonaws.com")
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: the distribution sends %q; make run sends %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the distribution sends %v; make run %v", got, want)
	}
	hsts := sec.at("StrictTransportSecurity")
	if h := "max-age=" + hsts.at("AccessControlMaxAgeSec").Value + "; includeSubDomains"; h != dashboard.HSTS || hsts.at("IncludeSubdomains").Value != "true" {
		t.Errorf("HSTS: the distribution sends %q; want %q", h, dashboard.HSTS)
	}
	for _, k := range []string{"ContentSecurityPolicy", "ContentTypeOptions", "FrameOptions", "ReferrerPolicy", "StrictTransportSecurity"} {
		if sec.at(k, "Override").Value != "true" {
			t.Errorf("%s does not override the origin's", k)
		}
	}
}

// TestTemplateDistribution: the bucket is private, encrypted, refuses
// plain HTTP and has its access logged into the access-log bucket, whose
// policy lets S3's logging write them under dashboard/ for this bucket's
// name; CloudFront reads it through origin access control (no
// legacy identity), serves HTTPS only (plain HTTP redirected) with the
// headers policy and index.html at the root; the Dashboard resource
// publishes into that bucket for this API.
func TestTemplateDistribution(t *testing.T) {
	res := readTemplate(t).at("Resources")
	b := res.at("DashboardBucket", "Properties")
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if b.at("PublicAccessBlockConfiguration", k).Value != "true" {
			t.Errorf("the bucket's %s is not true", k)
		}
	}
	if b.at("BucketEncryption").Node == nil {
		t.Error("the bucket is not encrypted")
	}
	if got := b.at("LoggingConfiguration").canon(); got != "[DestinationBucketName, !Ref AccessLogsBucket, LogFilePrefix, dashboard/]" {
		t.Errorf("the bucket's access logs: %s", got)
	}
	logs := res.at("AccessLogsBucketPolicy", "Properties", "PolicyDocument", "Statement").canon()
	name := b.at("BucketName").canon() // !Sub [scangate-dashboard-${StackUuid}, [StackUuid, ...]]
	for _, want := range []string{"[Service, logging.s3.amazonaws.com], Action, s3:PutObject, Resource, !Sub ${AccessLogsBucket.Arn}/dashboard/*",
		"aws:SourceArn, !Sub [arn:${AWS::Partition}:s3:::" + strings.TrimPrefix(name, "!Sub [")} {
		if !strings.Contains(logs, want) || !strings.HasPrefix(name, "!Sub [scangate-dashboard-") {
			t.Errorf("the access-log bucket's policy lacks %q (the bucket's name: %s): %s", want, name, logs)
		}
	}
	d := res.at("DashboardDistribution", "Properties", "DistributionConfig")
	origin := tpl{d.at("Origins").Content[0]}
	checks := map[string][2]string{
		"DefaultRootObject":       {d.at("DefaultRootObject").Value, "index.html"},
		"ViewerProtocolPolicy":    {d.at("DefaultCacheBehavior", "ViewerProtocolPolicy").Value, "redirect-to-https"},
		"ResponseHeadersPolicyId": {d.at("DefaultCacheBehavior", "ResponseHeadersPolicyId").canon(), "!Ref DashboardHeaders"},
		"OriginAccessControlId":   {origin.at("OriginAccessControlId").canon(), "!GetAtt DashboardOriginAccessControl.Id"},
		"OriginAccessIdentity":    {origin.at("S3OriginConfig", "OriginAccessIdentity").canon(), ""},
		"origin":                  {origin.at("DomainName").canon(), "!GetAtt DashboardBucket.RegionalDomainName"},
		"signing":                 {res.at("DashboardOriginAccessControl", "Properties", "OriginAccessControlConfig", "SigningBehavior").Value, "always"},
		"custom resource bucket":  {res.at("Dashboard", "Properties", "Bucket").canon(), "!Ref DashboardBucket"},
		"custom resource token":   {res.at("Dashboard", "Properties", "ServiceToken").canon(), "!GetAtt PublishDashboardFunction.Arn"},
		"custom resource API":     {res.at("Dashboard", "Properties", "ApiUrl").canon(), "!Sub https://${Api}.execute-api.${AWS::Region}.amazonaws.com/${StageName}/api"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s: %q; want %q", name, c[0], c[1])
		}
	}
}

// TestTemplateCORS: the API answers one origin, the dashboard's (the
// parameter, or the distribution's domain), and the same one everywhere:
// API Gateway's preflight (without the authorizer), every gateway
// response, and the functions' DASHBOARD_ORIGIN; the preflight allows
// every method of a route.
func TestTemplateCORS(t *testing.T) {
	doc := readTemplate(t)
	quoted := "!If [DashboardOriginGiven, !Sub '${DashboardOrigin}', !Sub 'https://${DashboardDistribution.DomainName}']"
	api := doc.at("Resources", "Api", "Properties")
	if got := api.at("Cors", "AllowOrigin").canon(); got != quoted {
		t.Errorf("the preflight's origin: %s; want %s", got, quoted)
	}
	if got := api.at("Auth", "AddDefaultAuthorizerToCorsPreflight").Value; got != "false" {
		t.Errorf("the preflight runs the authorizer: %q", got)
	}
	if got := api.at("Cors", "AllowHeaders").Value; got != "'Authorization,Content-Type'" {
		t.Errorf("the preflight allows the headers %s", got)
	}
	// Every method of a route is allowed (PATCH /webhooks/{id} too), and
	// OPTIONS, the preflight's own.
	routes, err := gateway.ReadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	allowed := strings.Split(strings.Trim(api.at("Cors", "AllowMethods").Value, "'"), ",")
	for _, r := range routes.Routes {
		if !slices.Contains(allowed, r.Method) {
			t.Errorf("the preflight does not allow %s, the method of %s", r.Method, r.Path)
		}
	}
	if !slices.Contains(allowed, "OPTIONS") {
		t.Errorf("the preflight allows %v, not OPTIONS", allowed)
	}
	responses := api.at("GatewayResponses")
	for i := 0; i+1 < len(responses.Content); i += 2 {
		if got := (tpl{responses.Content[i+1]}).at("ResponseParameters", "Headers", "Access-Control-Allow-Origin").canon(); got != quoted {
			t.Errorf("the gateway response %s: Access-Control-Allow-Origin %s", responses.Content[i].Value, got)
		}
	}
	want := "!If [DashboardOriginGiven, !Ref DashboardOrigin, !Sub https://${DashboardDistribution.DomainName}]"
	if got := doc.at("Globals", "Function", "Environment", "Variables", "DASHBOARD_ORIGIN").canon(); got != want {
		t.Errorf("the functions' DASHBOARD_ORIGIN: %s; want %s", got, want)
	}
	if p := doc.at("Parameters", "DashboardOrigin"); p.at("Default").Value != "" || !strings.Contains(p.at("AllowedPattern").Value, "https://") {
		t.Errorf("the DashboardOrigin parameter: %s", p.canon())
	}
}

// TestPublishPolicy: the publishing function's policy grants exactly the
// S3 actions Publish and Empty use, on the dashboard's bucket and its
// objects.
func TestPublishPolicy(t *testing.T) {
	srv, err := localstack.StartEmbeddedS3("us-east-1", aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	var mu sync.Mutex
	used := map[string]bool{}
	env := map[string]string{"S3_ENDPOINT": srv.URL, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	client, err := bucket.NewClient(func(k string) string { return env[k] }, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				mu.Lock()
				used[middleware.GetOperationName(ctx)] = true
				mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	name := "dashboard"
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	delete(used, "CreateBucket")
	p := dashboard.Publisher{S3: client}
	if _, err := p.Publish(context.Background(), name, apiURL, config.SignIn{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Publish(context.Background(), name, apiURL+"x", config.SignIn{}); err != nil { // the same keys again: nothing to delete
		t.Fatal(err)
	}
	if err := p.Empty(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	// The IAM action of each S3 operation, with its resource.
	actions := map[string]string{
		"PutObject": "s3:PutObject@objects", "DeleteObjects": "s3:DeleteObject@objects", "ListObjectsV2": "s3:ListBucket@bucket",
	}
	var needed []string
	for op := range used {
		a, ok := actions[op]
		if !ok {
			t.Errorf("Publisher uses %s, which this test does not map to IAM", op)
		}
		needed = append(needed, a)
	}
	var granted []string
	statements := readTemplate(t).at("Resources", "PublishDashboardFunction", "Properties", "Policies")
	for _, pol := range statements.Content {
		for _, st := range (tpl{pol}).at("Statement").Content {
			s := tpl{st}
			res := map[string]string{"!Sub ${DashboardBucket.Arn}/*": "objects", "!GetAtt DashboardBucket.Arn": "bucket"}[s.at("Resource").canon()]
			if s.at("Effect").Value != "Allow" || res == "" {
				t.Errorf("a statement of another kind or resource: %s", s.canon())
			}
			for _, a := range s.at("Action").Content {
				granted = append(granted, a.Value+"@"+res)
			}
		}
	}
	slices.Sort(needed)
	slices.Sort(granted)
	if !slices.Equal(needed, granted) {
		t.Errorf("the policy grants %v; Publisher uses %v", granted, needed)
	}
}
