package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/cfn"
)

// Dashboard writes the dashboard's files into its bucket, and empties it
// (internal/dashboard.Publisher).
type Dashboard interface {
	Publish(ctx context.Context, bucket, apiURL string) (int, error)
	Empty(ctx context.Context, bucket string) error
}

// PublishDashboard is the function of the custom resource that puts the
// dashboard into its bucket at deployment. Its properties:
// Bucket (the dashboard's bucket) and ApiUrl (the API's base URL, which
// config.json names). Create and Update write every file (and remove
// what an older version left); Delete empties the bucket, so that
// CloudFormation can delete it. The physical id names the bucket, so an
// update of the same bucket is never followed by a Delete of it.
func PublishDashboard(site Dashboard, log *slog.Logger) CustomResourceHandler {
	return CustomResourceHandler(cfn.LambdaWrap(func(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
		bucket, _ := ev.ResourceProperties["Bucket"].(string)
		apiURL, _ := ev.ResourceProperties["ApiUrl"].(string)
		attrs := []any{"operation", "PublishDashboard", "request_type", ev.RequestType, "request_id", ev.RequestID, "bucket", bucket}
		id := "dashboard:" + bucket
		var n int
		var err error
		switch ev.RequestType {
		case cfn.RequestDelete:
			id = ev.PhysicalResourceID
			if bucket != "" {
				err = site.Empty(ctx, bucket)
			}
		case cfn.RequestCreate, cfn.RequestUpdate:
			if bucket == "" || apiURL == "" {
				err = errors.New("the properties Bucket and ApiUrl are required")
				break
			}
			n, err = site.Publish(ctx, bucket, apiURL)
		default:
			err = fmt.Errorf("unknown request type %q", ev.RequestType)
		}
		if err != nil {
			log.ErrorContext(ctx, "publish dashboard", append(attrs, "error", err.Error())...)
			if ev.RequestType != cfn.RequestDelete {
				id = "" // the failed resource keeps CloudFormation's fallback id
			}
			return id, nil, fmt.Errorf("dashboard %s: %w", ev.RequestType, err)
		}
		log.InfoContext(ctx, "publish dashboard", append(attrs, "files", n)...)
		return id, map[string]any{"Files": n}, nil
	}))
}
