// Package trigger holds the functions that no HTTP request invokes: S3's
// ObjectCreated events (the ingest of uploads), EventBridge schedules (the
// expiry of allowlists), CloudFormation's custom resources (the publishing
// of the dashboard), and the kinds of trigger the operations table
// (internal/ops) knows for the functions to come: SQS queues and DynamoDB
// streams. Each handler has the signature aws-lambda-go's lambda.Start
// takes for its event.
package trigger

import (
	"context"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/events"
)

// S3Handler is the signature of a function that S3 events invoke.
type S3Handler func(context.Context, events.S3Event) error

// ScheduleHandler is the signature of a function an EventBridge schedule
// invokes.
type ScheduleHandler func(context.Context, events.EventBridgeEvent) error

// QueueHandler is the signature of a function an SQS queue invokes, with
// a partial batch response: the messages it names in BatchItemFailures are
// delivered again, the others are deleted (the event source mapping sets
// FunctionResponseTypes: ReportBatchItemFailures). An error fails the
// whole batch.
type QueueHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// StreamHandler is the signature of a function a DynamoDB stream invokes,
// with a partial batch response: the stream is read again from the first
// record BatchItemFailures names (its sequence number); an error fails the
// whole batch.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// CustomResourceHandler is the signature of the function of a
// CloudFormation custom resource: it answers CloudFormation's presigned
// response URL itself (cfn.LambdaWrap), success or failure, so that a
// stack never waits for an answer that will not come.
type CustomResourceHandler func(context.Context, cfn.Event) (reason string, err error)
