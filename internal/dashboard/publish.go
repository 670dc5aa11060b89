package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Publisher writes the dashboard into its S3 bucket, which holds nothing
// else, and empties it.
type Publisher struct {
	S3 *s3.Client
}

// Publish writes Site(apiURL) into bucket (each file with its type and
// CacheControl), then deletes every other object, so that a file an older
// version had does not linger. It answers how many files it wrote.
func (p Publisher) Publish(ctx context.Context, bucket, apiURL string) (int, error) {
	files, err := Site(apiURL)
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{}
	for _, f := range files {
		if _, err := p.S3.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: aws.String(f.Key), Body: bytes.NewReader(f.Body),
			ContentType: aws.String(f.ContentType), CacheControl: aws.String(CacheControl),
		}); err != nil {
			return 0, fmt.Errorf("put %s into %s: %w", f.Key, bucket, err)
		}
		keep[f.Key] = true
	}
	return len(files), p.remove(ctx, bucket, keep)
}

// Empty deletes every object of bucket: CloudFormation deletes only an
// empty bucket. A bucket that does not exist is empty.
func (p Publisher) Empty(ctx context.Context, bucket string) error {
	err := p.remove(ctx, bucket, nil)
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket" {
		return nil
	}
	return err
}

// remove deletes the objects of bucket whose keys keep lacks.
func (p Publisher) remove(ctx context.Context, bucket string, keep map[string]bool) error {
	pages := s3.NewListObjectsV2Paginator(p.S3, &s3.ListObjectsV2Input{Bucket: &bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", bucket, err)
		}
		var gone []types.ObjectIdentifier
		for _, o := range page.Contents {
			if !keep[aws.ToString(o.Key)] {
				gone = append(gone, types.ObjectIdentifier{Key: o.Key})
			}
		}
		if len(gone) == 0 {
			continue
		}
		out, err := p.S3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: gone, Quiet: aws.Bool(true)}})
		if err != nil {
			return fmt.Errorf("delete from %s: %w", bucket, err)
		}
		if len(out.Errors) > 0 {
			return fmt.Errorf("delete %s from %s: %s", aws.ToString(out.Errors[0].Key), bucket, aws.ToString(out.Errors[0].Message))
		}
	}
	return nil
}
